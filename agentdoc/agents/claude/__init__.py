"""The Claude Code CLI: its argv, the process, the stream-json events and the reply they build.

Also the offline Messages API (``agentdoc.agents.fakeapi``) that the demo and the end-to-end
tests point the real CLI at. Other packages import the names in ``__all__`` from here.
"""

from agentdoc.agents.claude.events import (
    ApiRetry,
    PermissionRequest,
    PermissionWithdrawn,
    StreamError,
)
from agentdoc.agents.claude.process import (
    AgentRequest,
    ClaudeProcess,
    build_argv,
    build_env,
    check_argv,
    resolve_executable,
    spawn,
)
from agentdoc.agents.claude.reply import Reply, ReplyBuilder, TextPart, ThinkingPart, ToolPart
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
from agentdoc.agents.claude.warm import AgentProcess, WarmProcess, WarmTurn, protect_rules

__all__ = [
    "AgentProcess",
    "AgentRequest",
    "ApiRetry",
    "ClaudeProcess",
    "PermissionRequest",
    "PermissionWithdrawn",
    "Reply",
    "ReplyBuilder",
    "SessionTurn",
    "StreamError",
    "TextPart",
    "ThinkingPart",
    "ToolPart",
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
]
