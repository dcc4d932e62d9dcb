"""Turn the Claude Code CLI's ``stream-json`` stdout into typed events.

Two pure steps: :func:`~agentdoc.agents.claude.framing.iter_lines` re-frames raw byte chunks
into lines, and :func:`parse_line` turns one line into an :data:`Event` (or ``None`` for lines
the reply does not depend on).
The event models are in :mod:`agentdoc.agents.claude.events`; what they *mean* for the reply is
:mod:`agentdoc.agents.claude.translate`'s job. A turn reads the text deltas that make up most of
a reply through :func:`streamed_text` instead, which builds no model for them.

Unknown ``type``/``subtype`` values, unknown delta kinds and unknown ``user`` lines are skipped
rather than rejected, because the CLI adds event kinds often and a parser that fails on them
would break every turn after an upgrade.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, Literal

from pydantic import ValidationError

from agentdoc.agents.claude.events import (
    BLOCK_TYPES,
    INTERRUPT_MARKER,
    ApiRetry,
    AssistantBlock,
    BlockDelta,
    BlockStart,
    BlockStop,
    ContentBlock,
    DeltaKind,
    Event,
    Init,
    Interrupted,
    MessageDelta,
    MessageStart,
    MessageStop,
    OtherBlock,
    PermissionRequest,
    PermissionWithdrawn,
    Result,
    StreamError,
    ToolResult,
    ToolResultBatch,
)
from agentdoc.agents.claude.usage import model_prices, prompt_weight, token_weight

logger = logging.getLogger(__name__)


# --- parsing --------------------------------------------------------------------------------


def parse_line(line: bytes | str) -> Event | None:
    """Parse one stdout line into an event.

    Returns ``None`` for blank lines, junk that does not start with ``{`` (including JSON that
    is not an object), and kinds the reply does not use or this module does not know.
    Raises :class:`StreamError` for a ``{`` line that is not valid JSON, or a known event whose
    fields have the wrong shape.
    """
    raw = load_line(line)
    return None if raw is None else convert(raw)


def load_line(line: bytes | str) -> dict[str, Any] | None:
    """The JSON object of one stdout line; ``None`` for blank lines and junk (see
    :func:`parse_line`, which is this followed by :func:`convert`)."""
    text = _decode(line).strip()
    if not text:
        return None
    if not text.startswith("{"):
        logger.debug("skipping non-JSON stdout line: %.200r", text)
        return None
    return _load(text)


def streamed_text(raw: dict[str, Any]) -> tuple[int, Literal["text", "thinking"], str] | None:
    """``(index, kind, text)`` of a main-reply text or thinking delta, else ``None``.

    Nearly every line of a reply is one of these, so they are read without building a model;
    the check is strict enough that :func:`convert` would make exactly this ``BlockDelta`` of
    the same line (anything else, odd shapes included, is left to it).
    """
    if raw.get("type") != "stream_event" or raw.get("parent_tool_use_id") is not None:
        return None
    event = raw.get("event")
    if type(event) is not dict or event.get("type") != "content_block_delta":
        return None
    delta = event.get("delta")
    if type(delta) is not dict:
        return None
    kind = delta.get("type")
    if kind == "text_delta":
        text = delta.get("text")
    elif kind == "thinking_delta":
        text = delta.get("thinking")
    else:
        return None
    index = event.get("index")
    if type(index) is not int or type(text) is not str:
        return None
    return index, "text" if kind == "text_delta" else "thinking", text


def convert(raw: dict[str, Any]) -> Event | None:
    """The event of a line's JSON object (``None``: a kind the reply does not use)."""
    kind = raw.get("type")
    make = _DISPATCH.get(kind) if isinstance(kind, str) else None
    if make is None:
        return None
    try:
        return make(raw)
    except ValidationError as exc:
        raise StreamError(f"malformed {kind!r} line: {exc}") from exc


def _decode(line: bytes | str) -> str:
    if isinstance(line, str):
        return line
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        if line.lstrip().startswith(b"{"):
            raise StreamError(f"line is not valid UTF-8: {exc}") from exc
        return ""


def _load(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StreamError(f"corrupt JSON line: {exc}: {text[:200]!r}") from exc
    if not isinstance(value, dict):  # unreachable for "{...}" text; kept for the type checker
        raise StreamError(f"line is not a JSON object: {text[:200]!r}")
    return value


def _fields(raw: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """The line's fields minus its wire ``type``, which would clash with the event's own tag."""
    return {key: value for key, value in raw.items() if key != "type"} | overrides


def _obj(value: Any) -> dict[str, Any]:
    """A nested JSON object, or an empty one when absent/not an object (the model then fails)."""
    return value if isinstance(value, dict) else {}


def _system(raw: dict[str, Any]) -> Event | None:
    subtype = raw.get("subtype")
    if subtype == "init":
        return Init.model_validate(_fields(raw, permission_mode=raw.get("permissionMode")))
    if subtype == "api_retry":
        return ApiRetry.model_validate(_fields(raw))
    return None


def _stream_event(raw: dict[str, Any]) -> Event | None:
    event = _obj(raw.get("event"))
    convert = _STREAM_EVENTS.get(str(event.get("type")))
    if convert is None:
        return None
    return convert(event, raw.get("parent_tool_use_id"))


def _message_start(event: dict[str, Any], parent: Any) -> Event:
    message = _obj(event.get("message"))
    usage = _obj(message.get("usage"))
    return MessageStart(
        message_id=message.get("id"),
        model=message.get("model"),
        # The whole prompt this API call read, cache included: what fills the context window.
        input_tokens=_input_tokens(usage) or None,
        prompt_weight=prompt_weight(usage),
        parent_tool_use_id=parent,
    )


def _block_start(event: dict[str, Any], parent: Any) -> Event:
    block = _obj(event.get("content_block"))
    tool = block if block.get("type") == "tool_use" else {}
    return BlockStart(
        index=event.get("index"),
        block_type=block.get("type"),
        tool_id=tool.get("id"),
        tool_name=tool.get("name"),
        data=block.get("data"),
        parent_tool_use_id=parent,
    )


# Which field of each delta type holds its text.
_DELTA_FIELDS: dict[str, tuple[DeltaKind, str]] = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "signature"),
    "input_json_delta": ("input_json", "partial_json"),
}


def _block_delta(event: dict[str, Any], parent: Any) -> Event | None:
    delta = _obj(event.get("delta"))
    known = _DELTA_FIELDS.get(str(delta.get("type")))
    if known is None:
        return None
    kind, field = known
    text = delta.get(field)
    return BlockDelta(index=event.get("index"), kind=kind, text=text, parent_tool_use_id=parent)


def _message_delta(event: dict[str, Any], parent: Any) -> Event:
    return MessageDelta(
        stop_reason=_obj(event.get("delta")).get("stop_reason"),
        output_tokens=_obj(event.get("usage")).get("output_tokens"),
        parent_tool_use_id=parent,
    )


_STREAM_EVENTS: dict[str, Callable[[dict[str, Any], Any], Event | None]] = {
    "message_start": _message_start,
    "content_block_start": _block_start,
    "content_block_delta": _block_delta,
    "content_block_stop": lambda event, parent: BlockStop(
        index=event.get("index"), parent_tool_use_id=parent
    ),
    "message_delta": _message_delta,
    "message_stop": lambda event, parent: MessageStop(parent_tool_use_id=parent),
}


def _assistant(raw: dict[str, Any]) -> Event:
    message = _obj(raw.get("message"))
    content = message.get("content")
    blocks = [_content_block(b) for b in content] if isinstance(content, list) else content
    return AssistantBlock(
        message_id=message.get("id"),
        model=message.get("model"),
        blocks=blocks,
        error=raw.get("error"),
        parent_tool_use_id=raw.get("parent_tool_use_id"),
    )


def _content_block(block: Any) -> ContentBlock:
    raw = _obj(block)
    model = BLOCK_TYPES.get(str(raw.get("type")))
    if model is None:
        return OtherBlock(type=str(raw.get("type")))
    return model.model_validate(raw)


def _user(raw: dict[str, Any]) -> Event | None:
    if raw.get("isReplay"):
        return None
    content = _obj(raw.get("message")).get("content")
    parent = raw.get("parent_tool_use_id")
    results = [
        _tool_result(block, parent)
        for block in _blocks(content)
        if block.get("type") == "tool_result"
    ]
    if len(results) == 1:
        return results[0]
    if results:
        return ToolResultBatch(results=results, parent_tool_use_id=parent)
    if _flatten(content).startswith(INTERRUPT_MARKER):
        return Interrupted(parent_tool_use_id=parent)
    return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tool_result(block: dict[str, Any], parent: Any) -> ToolResult:
    return ToolResult(
        tool_use_id=block.get("tool_use_id"),
        content=_flatten(block.get("content")),
        is_error=bool(block.get("is_error")),
        parent_tool_use_id=parent,
    )


def _flatten(content: Any) -> str:
    """Message content (a string or a list of blocks) as text; non-text blocks as ``[type]``."""
    if isinstance(content, str):
        return content
    pieces = [
        b["text"] if isinstance(b.get("text"), str) else f"[{b.get('type')}]"
        for b in _blocks(content)
    ]
    return "\n".join(pieces)


def _result(raw: dict[str, Any]) -> Event:
    usage, model_usage = _obj(raw.get("usage")), _obj(raw.get("modelUsage"))
    denials = raw.get("permission_denials")
    costs = _model_costs(model_usage)
    return Result.model_validate(
        _fields(
            raw,
            errors=raw.get("errors") or [],
            input_tokens=_input_tokens(usage),
            output_tokens=usage.get("output_tokens") or 0,
            models=list(model_usage),
            context_window=_context_window(model_usage),
            model_tokens=_model_tokens(model_usage),
            own_weight=token_weight(usage),
            model_costs=list(costs.values()),
            prices=model_prices(costs),
            permission_denials=len(denials) if isinstance(denials, list) else 0,
        )
    )


def _context_window(model_usage: dict[str, Any]) -> int | None:
    """The largest window among the turn's models (a helper model may have a smaller one)."""
    windows = [
        window
        for entry in model_usage.values()
        if isinstance(entry, dict) and isinstance(window := entry.get("contextWindow"), int)
    ]
    return max(windows, default=None)


def _model_costs(model_usage: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Each model's weighed tokens and reported cost in ``modelUsage``, by its name."""
    return {
        name: (token_weight(entry, model=True), float(cost))
        for name, entry in model_usage.items()
        if isinstance(entry, dict) and isinstance(cost := entry.get("costUSD"), int | float)
    }


def _model_tokens(model_usage: dict[str, Any]) -> list[int]:
    """Each model's tokens (prompt and answer) as ``modelUsage`` counts them."""
    keys = ("inputTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "outputTokens")
    return [
        sum(value for key in keys if isinstance(value := entry.get(key), int))
        for entry in model_usage.values()
        if isinstance(entry, dict)
    ]


def _input_tokens(usage: dict[str, Any]) -> int:
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(value for key in keys if isinstance(value := usage.get(key), int))


def _control_request(raw: dict[str, Any]) -> Event | None:
    request = _obj(raw.get("request"))
    if request.get("subtype") != "can_use_tool":
        return None  # other requests (hooks, MCP) are not ours to answer; the CLI goes on
    return PermissionRequest.model_validate(
        {
            "request_id": raw.get("request_id"),
            "tool_name": request.get("tool_name"),
            "input": _obj(request.get("input")),
            "description": request.get("description"),
            "tool_use_id": request.get("tool_use_id"),
        }
    )


def _control_cancel(raw: dict[str, Any]) -> Event:
    return PermissionWithdrawn.model_validate({"request_id": raw.get("request_id")})


_DISPATCH: dict[str, Callable[[dict[str, Any]], Event | None]] = {
    "control_request": _control_request,
    "control_cancel_request": _control_cancel,
    "system": _system,
    "stream_event": _stream_event,
    "assistant": _assistant,
    "user": _user,
    "result": _result,
}
