"""The events of the Claude Code CLI's ``stream-json`` output, as pydantic models.

Only what the reply depends on is modelled; :mod:`agentdoc.agents.claude.stream` builds them
from lines.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# The CLI writes this marker as a user message when a turn is aborted (SIGINT or an interrupt
# control request); a "for tool use" variant exists, hence the prefix match.
INTERRUPT_MARKER = "[Request interrupted by user"


class StreamError(Exception):
    """A line that claims to be a protocol event (starts with ``{``) but cannot be one."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


# --- content blocks (the payload of an ``assistant`` line) ---------------------------------


class TextBlock(_Model):
    type: Literal["text"] = "text"
    text: str


class ThinkingBlock(_Model):
    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(_Model):
    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str = ""


class ToolUseBlock(_Model):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class OtherBlock(_Model):
    """A block type this module does not know; kept so the caller can log it."""

    type: str


ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | OtherBlock

BLOCK_TYPES: dict[str, type[ContentBlock]] = {
    "text": TextBlock,
    "thinking": ThinkingBlock,
    "redacted_thinking": RedactedThinkingBlock,
    "tool_use": ToolUseBlock,
}


# --- events ---------------------------------------------------------------------------------


class Init(_Model):
    """``system/init``: first line of a run (again before each turn with stream-json input)."""

    type: Literal["init"] = "init"
    session_id: str
    model: str | None = None
    cwd: str | None = None
    tools: list[str] = Field(default_factory=list)
    claude_code_version: str | None = None
    permission_mode: str | None = None


class ApiRetry(_Model):
    """``system/api_retry``: the CLI is about to retry a failed API request."""

    type: Literal["api_retry"] = "api_retry"
    attempt: int
    max_retries: int
    retry_delay_ms: float
    error_status: int | None = None
    error: str | None = None


class _Streamed(_Model):
    # Set on the output of subagents (Task/Agent tool); the main reply ignores those lines.
    parent_tool_use_id: str | None = None


class MessageStart(_Streamed):
    type: Literal["message_start"] = "message_start"
    message_id: str
    model: str | None = None
    input_tokens: int | None = None
    prompt_weight: float = 0.0  # its prompt's tokens weighed by price (see `usage`)


class BlockStart(_Streamed):
    """``content_block_start``; ``data`` carries a redacted_thinking block's opaque payload."""

    type: Literal["block_start"] = "block_start"
    index: int
    block_type: str
    tool_id: str | None = None
    tool_name: str | None = None
    data: str | None = None


DeltaKind = Literal["text", "thinking", "signature", "input_json"]


class BlockDelta(_Streamed):
    type: Literal["block_delta"] = "block_delta"
    index: int
    kind: DeltaKind
    text: str


class BlockStop(_Streamed):
    type: Literal["block_stop"] = "block_stop"
    index: int


class MessageDelta(_Streamed):
    type: Literal["message_delta"] = "message_delta"
    stop_reason: str | None = None
    output_tokens: int | None = None


class MessageStop(_Streamed):
    type: Literal["message_stop"] = "message_stop"


class AssistantBlock(_Streamed):
    """One ``assistant`` line: a finished content block of message ``message_id``.

    ``blocks`` is a list although the CLI has only ever been seen to put exactly one block in
    each line; should it send several, they are all kept, in order. ``error`` is the top-level
    ``error`` field that marks a synthetic error notice (model ``<synthetic>``).
    """

    type: Literal["assistant"] = "assistant"
    message_id: str
    model: str | None = None
    blocks: list[ContentBlock] = Field(default_factory=list)
    error: str | None = None


class ToolResult(_Streamed):
    """A ``tool_result`` block from a ``user`` line, its content flattened to text."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str = ""
    is_error: bool = False


class ToolResultBatch(_Streamed):
    """A ``user`` line holding several tool results (only ever one was observed)."""

    type: Literal["tool_result_batch"] = "tool_result_batch"
    results: list[ToolResult]


class Interrupted(_Streamed):
    """The ``[Request interrupted by user]`` marker line."""

    type: Literal["interrupted"] = "interrupted"


def _whole(value: Any) -> Any:
    return round(value) if isinstance(value, float) else value


# A duration is only informative; a fractional one must not make the whole result unreadable.
Millis = Annotated[int | None, BeforeValidator(_whole)]


class Result(_Model):
    """The ``result`` line that ends a turn. Failure is ``is_error``, never ``subtype``.

    ``input_tokens`` counts every prompt token the API processed: plain input plus cache
    creation plus cache reads, because that is the size of the prompt a person would expect to
    see. ``models`` are the keys of ``modelUsage``; ``permission_denials`` is a count.
    """

    type: Literal["result"] = "result"
    subtype: str
    is_error: bool
    result: str | None = None
    errors: list[str] = Field(default_factory=list)
    session_id: str | None = None
    duration_ms: Millis = None
    num_turns: int | None = None
    total_cost_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    api_error_status: int | None = None
    terminal_reason: str | None = None
    models: list[str] = Field(default_factory=list)
    context_window: int | None = None  # the model's window (``modelUsage[…].contextWindow``)
    model_tokens: list[int] = Field(default_factory=list)  # each model's tokens in ``modelUsage``
    # The turn's tokens, and each model's (tokens, cost) in ``modelUsage``, weighed by price.
    own_weight: float = 0.0
    model_costs: list[tuple[float, float]] = Field(default_factory=list)
    prices: dict[str, float] = Field(default_factory=dict)  # each model's, by `model_prices`
    permission_denials: int = 0


class PermissionRequest(_Model):
    """A ``control_request`` of subtype ``can_use_tool``: the CLI waits for our answer (§12a)."""

    type: Literal["permission_request"] = "permission_request"
    request_id: str
    tool_name: str
    input: dict[str, Any] = Field(default_factory=dict)
    description: str | None = None
    tool_use_id: str | None = None


class PermissionWithdrawn(_Model):
    """A ``control_cancel_request``: the CLI no longer waits for that answer (interrupted)."""

    type: Literal["permission_withdrawn"] = "permission_withdrawn"
    request_id: str


Event = Annotated[
    Init
    | PermissionRequest
    | PermissionWithdrawn
    | ApiRetry
    | MessageStart
    | BlockStart
    | BlockDelta
    | BlockStop
    | MessageDelta
    | MessageStop
    | AssistantBlock
    | ToolResult
    | ToolResultBatch
    | Interrupted
    | Result,
    Field(discriminator="type"),
]
