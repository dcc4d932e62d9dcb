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
``status``, never starting it), and ``checking`` asks an agent's protocol whether it is ready
(for ``doctor``). ``fakeapi`` holds
the offline vendor APIs that the demo and the end-to-end tests point the real agents at.
"""

from agentdoc.agents.base.agent import Agent
from agentdoc.agents.base.checks import Check, Outcome
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.events import (
    Activity,
    Event,
    OptionKind,
    PermissionAsked,
    PermissionWithdrawn,
    Retrying,
)
from agentdoc.agents.base.failure import STALLED, Failure
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.base.process import END, AgentTurn, EndOfStream, WarmAgent
from agentdoc.agents.base.prompt import ImagePart, ImageType
from agentdoc.agents.base.reply import Reply, ReplyBuilder, TextPart, ThinkingPart, ToolPart
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.checking import agent_checks
from agentdoc.agents.folderfiles import folder_files
from agentdoc.agents.history import branch_point, mark_turn, restore_files, unrestorable
from agentdoc.agents.launch import prepare_warm, start_turn
from agentdoc.agents.options import SessionOptions, session_options
from agentdoc.agents.registry import (
    LEGACY_AGENT,
    AgentSpec,
    agent_named,
    builtin_agents,
    known_agents,
    recorded_owner,
    resolve_agent,
)

__all__ = [
    "END",
    "LEGACY_AGENT",
    "STALLED",
    "Activity",
    "Agent",
    "AgentRequest",
    "AgentSpec",
    "AgentTurn",
    "Check",
    "Clearance",
    "EndOfStream",
    "Event",
    "Failure",
    "ImagePart",
    "ImageType",
    "OptionKind",
    "Outcome",
    "PermissionAsked",
    "PermissionWithdrawn",
    "Reply",
    "ReplyBuilder",
    "Retrying",
    "SessionOptions",
    "TextPart",
    "ThinkingPart",
    "ToolPart",
    "TurnMark",
    "WarmAgent",
    "agent_checks",
    "agent_named",
    "branch_point",
    "builtin_agents",
    "folder_files",
    "known_agents",
    "mark_turn",
    "prepare_warm",
    "recorded_owner",
    "resolve_agent",
    "restore_files",
    "session_options",
    "start_turn",
    "unrestorable",
]
