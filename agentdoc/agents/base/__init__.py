"""What every agent protocol shares: the agent-neutral events of a turn, the reply they build,
the request, and the turn interface.

The protocol packages (``claude``, ``acp``) produce these; the face (``agentdoc.agents``)
re-exports them for the rest of agentdoc.
"""

from agentdoc.agents.base.agent import (
    Agent,
    Capabilities,
    Environ,
    Known,
)
from agentdoc.agents.base.checks import (
    Check,
    Outcome,
    Probe,
)
from agentdoc.agents.base.child import (
    Child,
    StderrTail,
    child_env,
    read_lines,
    spawn,
)
from agentdoc.agents.base.clearance import (
    Clearance,
    NotCleared,
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
from agentdoc.agents.base.offers import (
    Offer,
    recall,
    remember,
)
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
    "Check",
    "Child",
    "Clearance",
    "EndOfStream",
    "Environ",
    "Event",
    "Failure",
    "FailureKind",
    "ImagePart",
    "ImageType",
    "Known",
    "MessageStart",
    "MessageStop",
    "NotCleared",
    "Notice",
    "Offer",
    "OptionKind",
    "Outcome",
    "PermissionAsked",
    "PermissionOption",
    "PermissionWithdrawn",
    "Probe",
    "Reply",
    "ReplyBuilder",
    "Retract",
    "Retrying",
    "SessionStarted",
    "StderrTail",
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
    "WarmHandle",
    "WarmStart",
    "child_env",
    "classify_with",
    "neutralise_command",
    "neutralise_mentions",
    "read_lines",
    "recall",
    "remember",
    "spawn",
]
