"""What every agent protocol shares: the agent-neutral events of a turn and the turn interface.

The protocol packages (``claude``, ``acp``) produce these; the face (``agentdoc.agents``)
re-exports them for the rest of agentdoc.
"""

from agentdoc.agents.base.events import (
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
from agentdoc.agents.base.process import END, AgentTurn, EndOfStream
from agentdoc.agents.base.prompt import ImagePart, ImageType

__all__ = [
    "END",
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
    "Retract",
    "Retrying",
    "SessionStarted",
    "StopReason",
    "ToolCall",
    "ToolUpdate",
    "TurnEnd",
    "Usage",
]
