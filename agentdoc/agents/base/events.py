"""The agent-neutral events of one turn: what every protocol's parser produces.

The contract every producer keeps (the Claude stream-json parser, the ACP client):

- **Deltas only.** ``BlockDelta`` text is appended to its block; a producer never sends the
  whole text so far as a delta. A block's final text, when it differs from what its deltas
  built (a correction), rides in ``BlockEnd.text`` and replaces the preview.
- **A message lifecycle.** ``MessageStart`` → blocks (``BlockStart`` → ``BlockDelta``… →
  ``BlockEnd``; tool calls as ``ToolCall`` → ``ToolUpdate``…) → ``MessageStop``. Block state
  resets at each ``MessageStart``; indexes are per message.
- **Shown once.** Content shown while streaming is never sent again. An attempt the agent
  abandons (a failed stream it will retry) is taken back with ``Retract`` before the retry
  repeats it.
- **The end.** ``TurnEnd`` closes the turn with its stop reason, usage and session id; nothing
  after it belongs to the turn.

Permission requests (``PermissionAsked`` / ``PermissionWithdrawn``) travel on the same stream so
a turn sees them in order with the text around them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentdoc.agents.base.failure import Failure

BlockKind = Literal["text", "thinking", "redacted_thinking"]

# How a turn ended, in the agent's words mapped onto one vocabulary. "error" is a turn the
# agent could not complete (the API failed, the process died with a message).
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error"]

# What an option of a permission request does, as ACP names it; Claude's allow/deny map here.
OptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one turn (never a running total) and, when known, the context gauge."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    context_used: int | None = None  # tokens in the context window after this turn
    context_size: int | None = None  # the model's window
    # The session's running total as the agent reported it (kept for the next turn's
    # subtraction), when the agent reports one.
    session_cost_usd: float | None = None
    # ``cost_usd`` is agentdoc's estimate from the tokens it saw: the agent stopped without
    # saying what the turn cost.
    cost_estimated: bool = False


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """The session the turn runs in (and the model, when the agent says)."""

    session_id: str
    model: str | None = None
    note: str | None = None  # how the session came about, when the footer should say it


@dataclass(frozen=True, slots=True)
class MessageStart:
    message_id: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True)
class BlockStart:
    index: int
    kind: BlockKind


@dataclass(frozen=True, slots=True)
class BlockDelta:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class BlockEnd:
    index: int
    text: str | None = None  # the block's final text, only when it corrects the deltas


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call started: shown as a folded block where it happened."""

    tool_id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ToolUpdate:
    """Progress or the result of a tool call; ``result`` set once it completed or failed."""

    tool_id: str
    result: str | None = None
    is_error: bool = False
    input: dict[str, Any] | None = None  # the complete input, when it arrives late


@dataclass(frozen=True, slots=True)
class MessageStop:
    pass


@dataclass(frozen=True, slots=True)
class Activity:
    """The agent said something the reply does not show (a tool's input streaming, a line
    that could not be read): it is working, not stalled."""


@dataclass(frozen=True, slots=True)
class Retract:
    """Take back what ``message_id`` showed (None: every block not yet ended): a failed attempt
    the agent is about to repeat."""

    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class Retrying:
    """The agent waits to retry a failed API request (how many tries and how long it waits
    are None where the agent does not say)."""

    attempt: int
    max_retries: int | None = None
    delay_ms: float | None = None
    error_status: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Notice:
    """An error the agent reported in the stream (not reply text); the turn may go on."""

    text: str
    failure: Failure | None = None  # its kind, as the agent's protocol classifies its text


@dataclass(frozen=True, slots=True)
class PermissionOption:
    option_id: str
    name: str
    kind: OptionKind


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """The agent waits for the person's answer before a tool runs."""

    request_id: str
    tool_name: str
    input: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
    tool_id: str | None = None
    options: tuple[PermissionOption, ...] = ()


@dataclass(frozen=True, slots=True)
class PermissionWithdrawn:
    request_id: str


@dataclass(frozen=True, slots=True)
class TurnEnd:
    stop_reason: StopReason
    session_id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    error: str | None = None  # what failed, for people (stop_reason "error", or a notice)
    interrupted: bool = False  # the agent stopped part-way (a cancel, a signal)
    duration_ms: int | None = None
    failure: Failure | None = None  # the kind of ``error``, as the agent's protocol classifies it
    # A copy of the session as it stood at this end (the agent forked it right after the turn),
    # so a later fork or undo can continue the conversation from exactly here.
    branch: str | None = None
    # The agent keeps the text of this interrupted reply in its session (a fact of the agent,
    # not of its protocol): the next prompt need not bring it.
    partial_kept: bool = False


Event = (
    Activity
    | SessionStarted
    | MessageStart
    | BlockStart
    | BlockDelta
    | BlockEnd
    | ToolCall
    | ToolUpdate
    | MessageStop
    | Retract
    | Retrying
    | Notice
    | PermissionAsked
    | PermissionWithdrawn
    | TurnEnd
)
