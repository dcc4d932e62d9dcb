"""The agents: everything the rest of agentdoc knows of the program that answers a prompt.

This face is the only one ``daemon``, ``turn`` and ``document`` see; nothing above it names a
protocol. Below it, ``base`` holds the agent-neutral events every protocol produces and the
`Agent` each protocol fills in (what its agents can do, as data: session ids, resuming at a
turn, rewinding files, their session store, how their errors are classified), and each
protocol is a sub-package of its own: ``claude`` speaks the Claude Code CLI's stream-json,
``acp`` the Agent Client Protocol every other agent speaks. ``registry`` says which agents a
document may name and keeps the table of protocols (a spec's ``agent`` is its protocol's
`Agent`), ``launch`` starts one with its protocol, ``history`` marks, branches and rewinds
turns through the agent's `Agent`, ``options`` tells what a document's agent is set to (for
``status``, never starting it), and
``acp.probe`` checks that an ACP agent answers ``initialize`` (for ``doctor``). ``fakeapi`` holds
the offline vendor APIs that the demo and the end-to-end tests point the real agents at.
"""

from collections.abc import Mapping

from agentdoc.agents.acp import AgentInfo, find_program, handshake
from agentdoc.agents.base import (
    END,
    STALLED,
    Activity,
    Agent,
    AgentRequest,
    AgentTurn,
    BlockDelta,
    BlockEnd,
    BlockKind,
    BlockStart,
    Capabilities,
    Clearance,
    EndOfStream,
    Event,
    Failure,
    FailureKind,
    ImagePart,
    ImageType,
    MessageStart,
    MessageStop,
    NotCleared,
    Notice,
    Offer,
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
from agentdoc.agents.folderfiles import FolderFile, folder_files
from agentdoc.agents.history import branch_point, mark_turn, restore_files, unrestorable
from agentdoc.agents.launch import prepare_warm, start_turn
from agentdoc.agents.options import SessionOptions, session_options
from agentdoc.agents.registry import (
    LEGACY_AGENT,
    AgentSpec,
    agent_named,
    builtin_agents,
    known_agents,
    package_of,
    resolve_agent,
)

__all__ = [
    "END",
    "LEGACY_AGENT",
    "STALLED",
    "Activity",
    "Agent",
    "AgentInfo",
    "AgentRequest",
    "AgentSpec",
    "AgentTurn",
    "BlockDelta",
    "BlockEnd",
    "BlockKind",
    "BlockStart",
    "Capabilities",
    "Clearance",
    "EndOfStream",
    "Event",
    "Failure",
    "FailureKind",
    "FolderFile",
    "ImagePart",
    "ImageType",
    "MessageStart",
    "MessageStop",
    "NotCleared",
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
    "SessionOptions",
    "SessionStarted",
    "StopReason",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolPart",
    "ToolUpdate",
    "TurnEnd",
    "TurnMark",
    "Usage",
    "WarmAgent",
    "WarmStart",
    "agent_named",
    "branch_point",
    "builtin_agents",
    "find_program",
    "folder_files",
    "handshake",
    "inspect_agent",
    "known_agents",
    "mark_turn",
    "package_of",
    "prepare_warm",
    "resolve_agent",
    "restore_files",
    "session_options",
    "start_turn",
    "unrestorable",
]


def inspect_agent(
    spec: AgentSpec, environ: Mapping[str, str], policy: str | None, timeout: float
) -> Offer | None:
    """What the agent's sessions can be set to, and whether it can open one (its login);
    None for an agent with nothing to learn by opening a session."""
    inspector = spec.agent.inspect
    if inspector is None:
        return None
    return inspector(
        spec.name, spec.command, spec.env, environ, spec.permission_mode or policy, timeout
    )
