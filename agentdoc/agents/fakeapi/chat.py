"""The OpenAI Chat Completions dialect (`POST /v1/chat/completions`), as Qwen Code and pi use it.

Streamed, data-only SSE events, each a `chat.completion.chunk` with one choice whose `delta`
carries a piece: `reasoning_content` for thinking (the field OpenAI-compatible servers use),
`content` for text, `tool_calls` for a function call (its id and name first, then its
arguments in pieces). The chunk with `finish_reason` ends the message, a chunk with only the
usage follows it, and `data: [DONE]` ends the stream. A mid-stream error is a data event with
an `error` object. `GET /v1/models` is a side call listing no models.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agentdoc.agents.fakeapi import wire
from agentdoc.agents.fakeapi.dialect import ReplyContext, Route, body_tokens, output_tokens_for
from agentdoc.agents.fakeapi.script import ContentBlock, Failure, HttpError, Reply
from agentdoc.agents.fakeapi.wire import RecordedRequest, SseEvent

_ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    529: "server_error",
}
_FINISH = {"max_tokens": "length", "refusal": "content_filter"}
_TOOL_JSON_CHUNK = 24
_CREATED = 1_700_000_000  # a fixed timestamp: replies are reproducible


@dataclass(frozen=True)
class _Done(SseEvent):
    """The `data: [DONE]` line that ends a Chat Completions stream (not JSON)."""

    def encode(self) -> bytes:
        return b"data: [DONE]\n\n"


def _chunk(
    context: ReplyContext, delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{context.message_id}",
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": context.model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def finish_reason(reply: Reply) -> str:
    if reply.stop_reason in _FINISH:
        return _FINISH[reply.stop_reason]
    return "tool_calls" if any(b["type"] == "tool_use" for b in reply.content) else "stop"


def usage(input_tokens: int, reply: Reply) -> dict[str, Any]:
    output = output_tokens_for(reply.content)
    reasoning = sum(
        wire.estimate_tokens(len(b["thinking"])) for b in reply.content if b["type"] == "thinking"
    )
    return {
        "prompt_tokens": input_tokens,
        "completion_tokens": output,
        "total_tokens": input_tokens + output,
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _tool_call(index: int, block: ContentBlock, arguments: str) -> dict[str, Any]:
    return {
        "index": index,
        "id": block["id"],
        "type": "function",
        "function": {"name": block["name"], "arguments": arguments},
    }


def _block_deltas(
    block: ContentBlock, tool_index: int, chunk_chars: int | None
) -> Iterator[tuple[dict[str, Any], bool]]:
    """A block's deltas, each with whether script points count it."""
    if block["type"] == "text":
        for piece in wire.split_text(block["text"], chunk_chars):
            yield {"content": piece}, True
    elif block["type"] == "thinking":
        for piece in wire.split_text(block["thinking"], chunk_chars):
            yield {"reasoning_content": piece}, True
    elif block["type"] == "tool_use":
        yield {"tool_calls": [_tool_call(tool_index, block, "")]}, False
        arguments = json.dumps(block["input"])
        for piece in wire.split_text(arguments, chunk_chars or _TOOL_JSON_CHUNK):
            yield {"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]}, False


class ChatDialect:
    name = "openai-chat"

    def route(self, request: RecordedRequest) -> Route:
        path = urlsplit(request.path).path
        if request.method == "POST" and path.endswith("/chat/completions"):
            return "model"
        return "side" if request.method == "GET" and path.endswith("/models") else "unknown"

    def streams(self, request: RecordedRequest) -> bool:
        return request.stream

    def model_of(self, request: RecordedRequest) -> str:
        return str(request.body.get("model", "gpt-fake"))

    def input_tokens(self, request: RecordedRequest) -> int:
        return body_tokens(request)

    def events(self, reply: Reply, context: ReplyContext) -> Iterator[SseEvent]:
        yield SseEvent(None, _chunk(context, {"role": "assistant", "content": ""}))
        tools = 0
        for block in reply.content:
            for delta, counted in _block_deltas(block, tools, reply.chunk_chars):
                yield SseEvent(None, _chunk(context, delta), counted=counted)
            tools += block["type"] == "tool_use"
        yield SseEvent(None, _chunk(context, {}, finish_reason(reply)), closing=True)
        yield SseEvent(
            None, _chunk(context, {}) | {"choices": [], "usage": usage(context.input_tokens, reply)}
        )
        yield _Done(None, {})

    def whole(self, reply: Reply, context: ReplyContext) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": None}
        texts = [b["text"] for b in reply.content if b["type"] == "text"]
        thoughts = [b["thinking"] for b in reply.content if b["type"] == "thinking"]
        calls = [b for b in reply.content if b["type"] == "tool_use"]
        if texts:
            message["content"] = "".join(texts)
        if thoughts:
            message["reasoning_content"] = "".join(thoughts)
        if calls:
            message["tool_calls"] = [
                _tool_call(i, b, json.dumps(b["input"])) for i, b in enumerate(calls)
            ]
        return {
            "id": f"chatcmpl-{context.message_id}",
            "object": "chat.completion",
            "created": _CREATED,
            "model": context.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(reply)}],
            "usage": usage(context.input_tokens, reply),
        }

    def error_body(self, error: HttpError, request_id: str) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(error.status, "server_error")
        return {"error": {"message": error.message, "type": kind, "param": None, "code": kind}}

    def stream_error(self, fail: Failure, request_id: str) -> SseEvent:
        status = wire.status_for_error_type(fail.error_type)
        kind = _ERROR_TYPES.get(status, "server_error")
        return SseEvent(
            None, {"error": {"message": fail.message, "type": kind, "param": None, "code": kind}}
        )

    def side_answer(self, request: RecordedRequest) -> dict[str, Any]:
        return {"object": "list", "data": []}

    def user_texts(self, request: RecordedRequest) -> list[str]:
        """Text of the user messages, in order (a message's content is a string or parts)."""
        texts: list[str] = []
        for message in request.messages():
            if message.get("role") != "user":
                continue
            content = message.get("content")
            parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
            texts.extend(
                part["text"]
                for part in parts or []
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        return texts


CHAT = ChatDialect()
