"""What every agent protocol shares: the agent-neutral events of a turn, the reply they build,
the request, and the turn interface.

The protocol packages (``claude``, ``acp``) produce these; the face (``agentdoc.agents``)
re-exports them for the rest of agentdoc.
"""

from agentdoc.agents.base.agent import (
    Agent,
    Capabilities,
    Environ,
    SessionStore,
    TurnHistory,
)
from agentdoc.agents.base.child import (
    Child,
    FirstStep,
    StderrTail,
    child_env,
    group_gone,
    read_lines,
    spawn,
)
from agentdoc.agents.base.events import (
    Activity,
    BlockDelta,
    BlockEnd,
    BlockKind,
    BlockStart,
    Event,
    MessageStart,
    MessageStop,
    Notice,
    OptionKind,
    PermissionAsked,
    PermissionOption,
    PermissionWithdrawn,
    Retract,
    Retrying,
    SessionStarted,
    StopReason,
    ToolCall,
    ToolUpdate,
    TurnEnd,
    Usage,
)
from agentdoc.agents.base.failure import STALLED, Failure, FailureKind, classify_with
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.base.process import END, AgentTurn, EndOfStream, WarmAgent, WarmStart
from agentdoc.agents.base.prompt import (
    WORD_JOINER,
    ImagePart,
    ImageType,
    neutralise_command,
    neutralise_mentions,
)
from agentdoc.agents.base.reply import Reply, ReplyBuilder, TextPart, ThinkingPart, ToolPart
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.base.warm import WarmHandle

__all__ = [
    "END",
    "STALLED",
    "WORD_JOINER",
    "Activity",
    "Agent",
    "AgentRequest",
    "AgentTurn",
    "BlockDelta",
    "BlockEnd",
    "BlockKind",
    "BlockStart",
    "Capabilities",
    "Child",
    "EndOfStream",
    "Environ",
    "Event",
    "Failure",
    "FailureKind",
    "FirstStep",
    "ImagePart",
    "ImageType",
    "MessageStart",
    "MessageStop",
    "Notice",
    "OptionKind",
    "PermissionAsked",
    "PermissionOption",
    "PermissionWithdrawn",
    "Reply",
    "ReplyBuilder",
    "Retract",
    "Retrying",
    "SessionStarted",
    "SessionStore",
    "StderrTail",
    "StopReason",
    "TextPart",
    "ThinkingPart",
    "ToolCall",
    "ToolPart",
    "ToolUpdate",
    "TurnEnd",
    "TurnHistory",
    "TurnMark",
    "Usage",
    "WarmAgent",
    "WarmHandle",
    "WarmStart",
    "child_env",
    "classify_with",
    "group_gone",
    "neutralise_command",
    "neutralise_mentions",
    "read_lines",
    "spawn",
]
