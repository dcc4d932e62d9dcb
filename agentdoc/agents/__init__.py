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

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.agents.base.agent import Agent as Agent
    from agentdoc.agents.base.checks import Check as Check
    from agentdoc.agents.base.checks import Outcome as Outcome
    from agentdoc.agents.base.clearance import Clearance as Clearance
    from agentdoc.agents.base.events import Activity as Activity
    from agentdoc.agents.base.events import Event as Event
    from agentdoc.agents.base.events import OptionKind as OptionKind
    from agentdoc.agents.base.events import PermissionAsked as PermissionAsked
    from agentdoc.agents.base.events import PermissionWithdrawn as PermissionWithdrawn
    from agentdoc.agents.base.events import Retrying as Retrying
    from agentdoc.agents.base.events import SessionStarted as SessionStarted
    from agentdoc.agents.base.events import TurnEnd as TurnEnd
    from agentdoc.agents.base.failure import STALLED as STALLED
    from agentdoc.agents.base.failure import Failure as Failure
    from agentdoc.agents.base.marks import TurnMark as TurnMark
    from agentdoc.agents.base.process import END as END
    from agentdoc.agents.base.process import AgentTurn as AgentTurn
    from agentdoc.agents.base.process import EndOfStream as EndOfStream
    from agentdoc.agents.base.process import WarmAgent as WarmAgent
    from agentdoc.agents.base.process import WarmStart as WarmStart
    from agentdoc.agents.base.prompt import ImagePart as ImagePart
    from agentdoc.agents.base.prompt import ImageType as ImageType
    from agentdoc.agents.base.reply import Reply as Reply
    from agentdoc.agents.base.reply import ReplyBuilder as ReplyBuilder
    from agentdoc.agents.base.reply import TextPart as TextPart
    from agentdoc.agents.base.reply import ThinkingPart as ThinkingPart
    from agentdoc.agents.base.reply import ToolPart as ToolPart
    from agentdoc.agents.base.request import AgentRequest as AgentRequest
    from agentdoc.agents.checking import agent_checks as agent_checks
    from agentdoc.agents.folderfiles import folder_files as folder_files
    from agentdoc.agents.history import branch_point as branch_point
    from agentdoc.agents.history import mark_turn as mark_turn
    from agentdoc.agents.history import restore_files as restore_files
    from agentdoc.agents.history import unrestorable as unrestorable
    from agentdoc.agents.launch import prepare_warm as prepare_warm
    from agentdoc.agents.launch import start_turn as start_turn
    from agentdoc.agents.options import SessionOptions as SessionOptions
    from agentdoc.agents.options import session_options as session_options
    from agentdoc.agents.registry import LEGACY_AGENT as LEGACY_AGENT
    from agentdoc.agents.registry import AgentSpec as AgentSpec
    from agentdoc.agents.registry import agent_named as agent_named
    from agentdoc.agents.registry import builtin_agents as builtin_agents
    from agentdoc.agents.registry import known_agents as known_agents
    from agentdoc.agents.registry import recorded_owner as recorded_owner
    from agentdoc.agents.registry import resolve_agent as resolve_agent

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "base.agent": ("Agent",),
        "base.checks": ("Check", "Outcome"),
        "base.clearance": ("Clearance",),
        "base.events": (
            "Activity",
            "Event",
            "OptionKind",
            "PermissionAsked",
            "PermissionWithdrawn",
            "Retrying",
            "SessionStarted",
            "TurnEnd",
        ),
        "base.failure": ("STALLED", "Failure"),
        "base.marks": ("TurnMark",),
        "base.process": ("END", "AgentTurn", "EndOfStream", "WarmAgent", "WarmStart"),
        "base.prompt": ("ImagePart", "ImageType"),
        "base.reply": ("Reply", "ReplyBuilder", "TextPart", "ThinkingPart", "ToolPart"),
        "base.request": ("AgentRequest",),
        "checking": ("agent_checks",),
        "folderfiles": ("folder_files",),
        "history": ("branch_point", "mark_turn", "restore_files", "unrestorable"),
        "launch": ("prepare_warm", "start_turn"),
        "options": ("SessionOptions", "session_options"),
        "registry": (
            "LEGACY_AGENT",
            "AgentSpec",
            "agent_named",
            "builtin_agents",
            "known_agents",
            "recorded_owner",
            "resolve_agent",
        ),
    },
)
