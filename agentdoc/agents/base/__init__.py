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
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.base.process import END, AgentTurn, EndOfStream

__all__ = [
    "END",
    "AgentTurn",
    "BlockDelta",
    "BlockEnd",
    "BlockKind",
    "BlockStart",
    "EndOfStream",
    "Event",
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
    "TurnMark",
    "Usage",
]
