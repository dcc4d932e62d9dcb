"""An offline stand-in for the Anthropic Messages API, serving scripted replies on loopback.

`agentdoc demo` points the real Claude Code CLI at it so a newcomer can watch a canned reply
stream into a document without an account, and the end-to-end tests use it to drive the CLI
through success, HTTP errors and mid-stream failures. It implements only what the CLI uses:
`HEAD /`, and `POST /v1/messages` answered as an SSE stream or, for the CLI's non-streaming
fallback after a failed stream, as one JSON message.

A script is a sequence of JSON-like entries (a JSON file works: `load_script`). Each POST
consumes the next entry, streaming or not; when the script runs out, the `default` entry answers.

* `[block, ...]`: a successful message. Blocks: `{"type":"text","text":...}`,
  `{"type":"thinking","thinking":...,"signature":...}`, `{"type":"redacted_thinking","data":...}`,
  `{"type":"tool_use","name":...,"input":{...}}` (ids `toolu_fake_<n>` are assigned).
* `{"content": [...], ...options}`: the same, with `chunk_chars` (delta size; default one word
  plus its trailing space), `delta_delay` seconds or `delay_ms` (per text/thinking delta),
  `first_byte_delay_ms`, `stop_reason` (default `tool_use` or `end_turn`),
  `pause_after_deltas: N` (hold the stream after N text/thinking deltas until `release()`), and
  `fail: {"mode": M, "after_deltas": N, ...}` where M is `disconnect` (TCP reset), `sse_error`
  (`error_type`, `message`: an SSE `error` event), `hang` (`seconds`: silence, then the body
  ends) or `truncate` (the body ends without the stop events). A non-streaming request gets the
  nearest equivalent: a reset, an HTTP error, a reset after the hang, or half a JSON body.
* `{"status": 500, "error_type": ..., "message": ..., "retry_after": ...}`: an HTTP error with
  the Anthropic error JSON. The fixture spelling `{"content": [...], "fail": {"mode": "http",
  "status": 500}}` means the same.
* `times` (or `repeat`) on a dict entry: how many consecutive requests it answers (default 1;
  `"always"` or -1: every request from then on).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast

ContentBlock: TypeAlias = dict[str, Any]
ScriptEntry: TypeAlias = list[ContentBlock] | dict[str, Any]
FailMode: TypeAlias = Literal["disconnect", "sse_error", "hang", "truncate"]

ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES: Mapping[int, str] = {
    400: "Invalid request",
    401: "invalid x-api-key",
    403: "Permission denied",
    404: "Not found",
    413: "Request too large",
    429: "Rate limited",
    500: "Internal server error",
    529: "Overloaded",
}
_FAIL_MODES = ("disconnect", "sse_error", "hang", "truncate")
_REPLY_KEYS = {
    "content", "chunk_chars", "delta_delay", "delay_ms", "first_byte_delay_ms",
    "pause_after_deltas", "fail", "stop_reason", "times", "repeat",
}  # fmt: skip
_HTTP_ERROR_KEYS = {"status", "error_type", "message", "times", "repeat", "retry_after"}
_REQUIRED_BLOCK_KEYS: Mapping[str, tuple[str, ...]] = {
    "text": ("text",),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
    "tool_use": ("name",),
}
FALLBACK_REPLY: ScriptEntry = [{"type": "text", "text": "(no scripted reply)"}]


@dataclass(frozen=True)
class Failure:
    """How a scripted reply breaks after `after_deltas` text/thinking deltas."""

    mode: FailMode
    after_deltas: int = 0
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    seconds: float = 30.0


@dataclass(frozen=True)
class Reply:
    """A successful (possibly sabotaged) assistant message."""

    content: tuple[ContentBlock, ...]
    chunk_chars: int | None = None
    delta_delay: float | None = None
    first_byte_delay: float = 0.0
    pause_after_deltas: int | None = None
    fail: Failure | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class HttpError:
    """An error answered before any body byte, with the Anthropic error JSON."""

    status: int
    error_type: str
    message: str
    retry_after: float | None = None


Answer: TypeAlias = Reply | HttpError


@dataclass(frozen=True)
class PlannedAnswer:
    """A parsed script entry: the answer and how many requests get it (None: all of them)."""

    answer: Answer
    times: int | None = 1


def parse_entry(entry: ScriptEntry) -> PlannedAnswer:
    """Validate one script entry; raises ValueError with the reason if it is malformed."""
    if isinstance(entry, list):
        return PlannedAnswer(Reply(content=_parse_content(entry)))
    if not isinstance(entry, dict):
        raise ValueError(f"script entry must be a list of blocks or a dict, got {entry!r}")
    times = _parse_times(entry.get("times", entry.get("repeat", 1)))
    if "content" not in entry and "status" in entry:
        _reject_unknown(entry, _HTTP_ERROR_KEYS)
        return PlannedAnswer(_parse_http_error(entry), times)
    _reject_unknown(entry, _REPLY_KEYS)
    fail = entry.get("fail")
    if isinstance(fail, dict) and fail.get("mode") == "http":
        return PlannedAnswer(_parse_http_error(fail), times)
    return PlannedAnswer(_parse_reply(entry), times)


def _parse_reply(entry: dict[str, Any]) -> Reply:
    delay = entry.get("delta_delay")
    if delay is None and "delay_ms" in entry:
        delay = float(entry["delay_ms"]) / 1000
    chunk = entry.get("chunk_chars")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk_chars must be a positive integer, got {chunk!r}")
    pause = entry.get("pause_after_deltas")
    return Reply(
        content=_parse_content(entry.get("content", [])),
        chunk_chars=chunk,
        delta_delay=None if delay is None else float(delay),
        first_byte_delay=float(entry.get("first_byte_delay_ms", 0)) / 1000,
        pause_after_deltas=None if pause is None else int(pause),
        fail=None if entry.get("fail") is None else _parse_failure(entry["fail"]),
        stop_reason=entry.get("stop_reason"),
    )


def _parse_failure(raw: Any) -> Failure:
    if not isinstance(raw, dict) or raw.get("mode") not in _FAIL_MODES:
        raise ValueError(f"fail needs a mode out of {_FAIL_MODES}, got {raw!r}")
    return Failure(
        mode=raw["mode"],
        after_deltas=int(raw.get("after_deltas", 0)),
        error_type=str(raw.get("error_type", "overloaded_error")),
        message=str(raw.get("message", "Overloaded")),
        seconds=float(raw.get("seconds", 30.0)),
    )


def _parse_http_error(raw: dict[str, Any]) -> HttpError:
    status = raw.get("status")
    if not isinstance(status, int) or status not in ERROR_TYPES:
        raise ValueError(f"HTTP error status must be one of {sorted(ERROR_TYPES)}, got {status!r}")
    retry_after = raw.get("retry_after")
    return HttpError(
        status=status,
        error_type=str(raw.get("error_type", ERROR_TYPES[status])),
        message=str(raw.get("message", _DEFAULT_MESSAGES[status])),
        retry_after=None if retry_after is None else float(retry_after),
    )


def _parse_times(raw: Any) -> int | None:
    if raw == "always" or raw == -1:
        return None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        return raw
    raise ValueError(f'times/repeat must be a positive integer, -1 or "always", got {raw!r}')


def _reject_unknown(entry: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise ValueError(f"unknown script keys {sorted(unknown)} in {entry!r}")


def _parse_content(blocks: Any) -> tuple[ContentBlock, ...]:
    if not isinstance(blocks, list):
        raise ValueError(f"content must be a list of blocks, got {blocks!r}")
    return tuple(_parse_block(block) for block in blocks)


def _parse_block(block: Any) -> ContentBlock:
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str) or kind not in _REQUIRED_BLOCK_KEYS:
        raise ValueError(f"unsupported content block {block!r}")
    missing = [key for key in _REQUIRED_BLOCK_KEYS[kind] if key not in block]
    if missing:
        raise ValueError(f"{kind} block lacks {missing}: {block!r}")
    if kind == "thinking":
        return {
            "type": kind,
            "thinking": block["thinking"],
            "signature": block.get("signature", "sig"),
        }
    if kind == "tool_use":
        return tool_use_block(block.get("id"), block["name"], dict(block.get("input", {})))
    return dict(block)


def tool_use_block(tool_id: str | None, name: str, arguments: dict[str, Any]) -> ContentBlock:
    """A tool_use block in the API's key order; the id is left out until the server assigns it."""
    id_part = {} if tool_id is None else {"id": tool_id}
    return {"type": "tool_use", **id_part, "name": name, "input": arguments}


def substitute(value: Any, variables: Mapping[str, str]) -> Any:
    """Replace `{{name}}` in every string of a JSON-like value (fixtures use `{{cwd}}`)."""
    if isinstance(value, str):
        return re.sub(r"\{\{(\w+)\}\}", lambda m: variables.get(m[1], m[0]), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def load_script(
    path: Path | str, *, variables: Mapping[str, str] | None = None
) -> list[ScriptEntry]:
    """Read a JSON script file (a list of entries), validating every entry."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: a script is a JSON list of entries")
    script = cast(list[ScriptEntry], substitute(raw, variables or {}))
    for entry in script:
        parse_entry(entry)
    return script
