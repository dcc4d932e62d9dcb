"""The agents: everything the rest of agentdoc knows of the program that answers a prompt.

This face is the only one ``daemon``, ``turn`` and ``document`` see; nothing above it names a
protocol. Below it, ``base`` holds the agent-neutral events every protocol produces, and each
protocol is a sub-package of its own: ``claude`` speaks the Claude Code CLI's stream-json,
``acp`` the Agent Client Protocol every other agent speaks. ``registry`` says which agents a
document may name and how each is started, ``launch`` starts one with its protocol, and
``probe`` checks that an ACP agent answers ``initialize`` (for ``doctor``). ``fakeapi`` holds
the offline vendor APIs that the demo and the end-to-end tests point the real agents at.
"""

from collections.abc import Mapping

from agentdoc.agents.acp import Offer, inspect_acp
from agentdoc.agents.base import (
    END,
    Activity,
    AgentRequest,
    AgentTurn,
    BlockDelta,
    BlockEnd,
    BlockKind,
    BlockStart,
    EndOfStream,
    Event,
    ImagePart,
    ImageType,
    MessageStart,
    MessageStop,
    Notice,
    OptionKind,
    PermissionAsked,
    PermissionOption,
    PermissionWithdrawn,
    Reply,
    ReplyBuilder,
    Retract,
    Retrying,
    SessionStarted,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolPart,
    ToolUpdate,
    TurnEnd,
    TurnMark,
    Usage,
    WarmAgent,
    WarmStart,
)
from agentdoc.agents.claude import has_session, last_reply_text, resolve_executable
from agentdoc.agents.history import branch_point, mark_turn, restore_files, unrestorable
from agentdoc.agents.launch import UnknownAgent, prepare_warm, start_turn
from agentdoc.agents.probe import AgentInfo, find_program, handshake
from agentdoc.agents.registry import (
    AgentSpec,
    builtin_agents,
    known_agents,
    package_of,
    resolve_agent,
)

__all__ = [
    "END",
    "Activity",
    "AgentInfo",
    "AgentRequest",
    "AgentSpec",
    "AgentTurn",
    "BlockDelta",
    "BlockEnd",
    "BlockKind",
    "BlockStart",
    "EndOfStream",
    "Event",
    "ImagePart",
    "ImageType",
    "MessageStart",
    "MessageStop",
    "Notice",
    "Offer",
    "OptionKind",
    "PermissionAsked",
    "PermissionOption",
    "PermissionWithdrawn",
    "Reply",
    "ReplyBuilder",
    "Retract",
    "Retrying",
    "SessionStarted",
    "StopReason",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolPart",
    "ToolUpdate",
    "TurnEnd",
    "TurnMark",
    "UnknownAgent",
    "Usage",
    "WarmAgent",
    "WarmStart",
    "branch_point",
    "builtin_agents",
    "find_program",
    "handshake",
    "has_session",
    "inspect_agent",
    "known_agents",
    "last_reply_text",
    "mark_turn",
    "package_of",
    "prepare_warm",
    "resolve_agent",
    "resolve_executable",
    "restore_files",
    "start_turn",
    "unrestorable",
]


def inspect_agent(
    spec: AgentSpec, environ: Mapping[str, str], policy: str | None, timeout: float
) -> Offer:
    """What an ACP agent's sessions can be set to, and whether it can open one (its login)."""
    return inspect_acp(spec.name, spec.command, spec.env, environ, policy, timeout)
