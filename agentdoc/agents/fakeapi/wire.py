"""The Messages API's wire format: requests as received, SSE events, message and error bodies.

Pure functions of a parsed script entry; the server only writes what they return.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentdoc.agents.fakeapi.script import ERROR_TYPES, ContentBlock, Reply

_STATUS_BY_ERROR_TYPE = {kind: status for status, kind in ERROR_TYPES.items()}
_TOOL_JSON_CHUNK = 24


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    def user_texts(self) -> list[str]:
        """Text of the user messages, in order, without the CLI's `<system-reminder>` blocks."""
        texts: list[str] = []
        for message in self.messages():
            if message.get("role") == "user":
                texts.extend(_user_message_texts(message.get("content")))
        return texts


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event (`name` None: a data-only event, as Gemini sends them).

    `counted` marks the text/thinking deltas that script points count; `closing` marks the event
    that ends a complete message, before which a point set past the last delta still fires.
    """

    name: str | None
    data: dict[str, Any]
    counted: bool = False
    closing: bool = False

    def encode(self) -> bytes:
        head = "" if self.name is None else f"event: {self.name}\n"
        return f"{head}data: {json.dumps(self.data)}\n\n".encode()


def _user_message_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [] if _is_reminder(content) else [content]
    blocks = content if isinstance(content, list) else []
    return [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and not _is_reminder(block["text"])
    ]


def _is_reminder(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


def split_text(text: str, chunk_chars: int | None) -> list[str]:
    """Delta pieces: fixed-size character chunks, or one word plus its trailing space each."""
    if chunk_chars:
        return [text[i : i + chunk_chars] for i in range(0, len(text), chunk_chars)]
    return re.findall(r"\S+\s*|\s+", text)


def estimate_tokens(chars: int) -> int:
    return max(1, chars // 4)


def output_chars(content: Sequence[ContentBlock]) -> int:
    """Characters the model "generated": visible text, thinking, tool arguments."""
    return sum(_generated_chars(block) for block in content)


def _generated_chars(block: ContentBlock) -> int:
    if block["type"] == "tool_use":
        return len(json.dumps(block["input"]))
    return len(str(block.get("text") or block.get("thinking") or block.get("data") or ""))


def stop_reason_for(reply: Reply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if any(b["type"] == "tool_use" for b in reply.content) else "end_turn"


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def message_json(reply: Reply, message_id: str, model: str, input_tokens: int) -> dict[str, Any]:
    """The whole message, as a non-streaming response body (tool ids must be assigned)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(reply.content),
        "stop_reason": stop_reason_for(reply),
        "stop_sequence": None,
        "usage": usage(input_tokens, estimate_tokens(output_chars(reply.content))),
    }


def error_json(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }


def message_events(
    reply: Reply, message_id: str, model: str, input_tokens: int
) -> Iterator[SseEvent]:
    """The SSE events of a complete streamed message (tool ids must be assigned)."""
    start = message_json(reply, message_id, model, input_tokens)
    start.update(content=[], stop_reason=None, usage=usage(input_tokens, 1))
    yield SseEvent("message_start", {"type": "message_start", "message": start})
    yield SseEvent("ping", {"type": "ping"})
    for index, block in enumerate(reply.content):
        yield from _block_events(index, block, reply.chunk_chars)
    delta = {"stop_reason": stop_reason_for(reply), "stop_sequence": None}
    out = {"output_tokens": estimate_tokens(output_chars(reply.content))}
    data = {"type": "message_delta", "delta": delta, "usage": out}
    yield SseEvent("message_delta", data, closing=True)
    yield SseEvent("message_stop", {"type": "message_stop"})


def _block_events(index: int, block: ContentBlock, chunk_chars: int | None) -> Iterator[SseEvent]:
    kind = block["type"]
    if kind == "text":
        yield _block_start(index, {"type": "text", "text": ""})
        for piece in split_text(block["text"], chunk_chars):
            yield _delta(index, {"type": "text_delta", "text": piece}, counted=True)
    elif kind == "thinking":
        yield _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        for piece in split_text(block["thinking"], chunk_chars):
            yield _delta(index, {"type": "thinking_delta", "thinking": piece}, counted=True)
        yield _delta(index, {"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        yield _block_start(index, {**block, "input": {}})
        arguments = json.dumps(block["input"])
        for piece in split_text(arguments, chunk_chars or _TOOL_JSON_CHUNK):
            yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
    else:  # redacted_thinking arrives whole, without deltas
        yield _block_start(index, block)
    yield SseEvent("content_block_stop", {"type": "content_block_stop", "index": index})


def _block_start(index: int, block: ContentBlock) -> SseEvent:
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return SseEvent("content_block_start", data)


def _delta(index: int, delta: dict[str, Any], *, counted: bool = False) -> SseEvent:
    data = {"type": "content_block_delta", "index": index, "delta": delta}
    return SseEvent("content_block_delta", data, counted)


def checkpoint_due(event: SseEvent, deltas_sent: int, after: int) -> bool:
    """Whether a pause/failure point set at `after` deltas fires before `event` is sent.

    A point beyond the last delta fires before the closing event, so it always fires once.
    """
    return event.closing or (event.counted and deltas_sent >= after)


def input_tokens_for(body: Mapping[str, Any]) -> int:
    prompt = json.dumps([body.get("system"), body.get("messages")])
    return estimate_tokens(len(prompt))


def status_for_error_type(error_type: str) -> int:
    return _STATUS_BY_ERROR_TYPE.get(error_type, 500)


def is_messages_post(request: RecordedRequest) -> bool:
    return request.method == "POST" and urlsplit(request.path).path == "/v1/messages"
