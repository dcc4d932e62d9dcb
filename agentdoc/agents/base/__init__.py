"""What every agent protocol shares: the agent-neutral events of a turn, the reply they build,
the request, and the turn interface.

The protocol packages (``claude``, ``acp``) produce these; the face (``agentdoc.agents``)
re-exports them for the rest of agentdoc.
"""

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

__all__ = [
    "END",
    "WORD_JOINER",
    "Activity",
    "AgentRequest",
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
    "Usage",
    "WarmAgent",
    "WarmStart",
    "neutralise_command",
    "neutralise_mentions",
]
