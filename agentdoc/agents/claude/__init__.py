"""The Claude Code CLI: its argv, the process, the stream-json events and their translation into
the agent-neutral events.

The rest of agentdoc sees only its `Agent`, ``CLAUDE``: how to start it, what it can do, its
session files and turn history, and what `doctor` checks of it.
"""

from agentdoc.agents.claude.agent import CLAUDE

__all__ = [
    "CLAUDE",
]
