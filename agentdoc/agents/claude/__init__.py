"""The Claude Code CLI: its argv, the process, the stream-json events and their translation into
the agent-neutral events.

Also the offline Messages API (``agentdoc.agents.fakeapi``) that the demo and the end-to-end
tests point the real CLI at. Other packages import the names in ``__all__`` from here.
"""

from agentdoc.agents.base import AgentRequest
from agentdoc.agents.claude.agent import CLAUDE
from agentdoc.agents.claude.events import StreamError
from agentdoc.agents.claude.launch import start as start_claude
from agentdoc.agents.claude.launch import warm as warm_claude
from agentdoc.agents.claude.process import (
    ClaudeProcess,
    build_argv,
    build_env,
    check_argv,
    protect_rules,
    resolve_executable,
    spawn,
)
from agentdoc.agents.claude.rewind import (
    SessionTurn,
    changes_files,
    files_unrestorable,
    rewind_files,
    session_prompt,
    session_turn,
)
from agentdoc.agents.claude.sessionstore import has_session, last_reply_text
from agentdoc.agents.claude.stream import parse_line
from agentdoc.agents.claude.translate import Translator
from agentdoc.agents.claude.turn import ClaudeTurn
from agentdoc.agents.claude.warm import AgentProcess, WarmProcess, WarmTurn

__all__ = [
    "CLAUDE",
    "AgentProcess",
    "AgentRequest",
    "ClaudeProcess",
    "ClaudeTurn",
    "SessionTurn",
    "StreamError",
    "Translator",
    "WarmProcess",
    "WarmTurn",
    "build_argv",
    "build_env",
    "changes_files",
    "check_argv",
    "files_unrestorable",
    "has_session",
    "last_reply_text",
    "parse_line",
    "protect_rules",
    "resolve_executable",
    "rewind_files",
    "session_prompt",
    "session_turn",
    "spawn",
    "start_claude",
    "warm_claude",
]
