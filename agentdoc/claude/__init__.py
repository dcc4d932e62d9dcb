"""The Claude Code CLI: its argv, the process, the stream-json events and the reply they build.

Also the offline Messages API (``agentdoc.claude.fakeapi``) that the demo and the end-to-end
tests point the real CLI at. Other packages import the names in ``__all__`` from here.
"""

from agentdoc.claude.events import ApiRetry, StreamError
from agentdoc.claude.process import AgentRequest, ClaudeProcess, resolve_executable, spawn
from agentdoc.claude.reply import Reply, ReplyBuilder, TextPart, ThinkingPart, ToolPart
from agentdoc.claude.sessionstore import has_session
from agentdoc.claude.stream import parse_line

__all__ = [
    "AgentRequest",
    "ApiRetry",
    "ClaudeProcess",
    "Reply",
    "ReplyBuilder",
    "StreamError",
    "TextPart",
    "ThinkingPart",
    "ToolPart",
    "has_session",
    "parse_line",
    "resolve_executable",
    "spawn",
]
