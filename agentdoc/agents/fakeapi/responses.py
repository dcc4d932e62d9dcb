"""The OpenAI Responses dialect, as Codex uses it (`POST /v1/responses`, streamed).

Named SSE events: `response.created`, then per output item `response.output_item.added`, its
deltas (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
`response.function_call_arguments.delta`) and `response.output_item.done` with the whole item,
and at the end `response.completed` with the output and usage. A mid-stream error is
`response.failed`.

A scripted ``tool_use`` whose input is only ``{"freeform": TEXT}`` is a custom (freeform) tool
call, as Codex's ``apply_patch`` is: a `custom_tool_call` item whose `input` is TEXT.
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

_ERROR_CODES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "invalid_api_key",
    403: "permission_denied",
    404: "not_found",
    413: "request_too_large",
    429: "rate_limit_exceeded",
    500: "server_error",
    529: "server_is_overloaded",
}
_TOOL_JSON_CHUNK = 24
FREEFORM = "freeform"  # the one input key of a scripted custom tool call


@dataclass(frozen=True)
class _Item:
    """One output item being streamed: its position, id and the block it comes from."""

    index: int
    id: str
    block: ContentBlock


def _event(kind: str, data: dict[str, object], *, counted: bool = False) -> SseEvent:
    closing = kind == "response.completed"
    return SseEvent(kind, {"type": kind, **data}, counted=counted, closing=closing)


def done_item(item: _Item) -> dict[str, Any]:
    """The whole output item, as `response.output_item.done` and the final output carry it."""
    block = item.block
    if block["type"] == "text":
        part = {"type": "output_text", "text": block["text"], "annotations": []}
        return {"id": item.id, "type": "message", "status": "completed", "role": "assistant",
                "content": [part]}  # fmt: skip
    if block["type"] == "thinking":
        summary = [{"type": "summary_text", "text": block["thinking"]}]
        return {"id": item.id, "type": "reasoning", "summary": summary}
    text = freeform(block)
    if text is not None:
        return {"id": item.id, "type": "custom_tool_call", "status": "completed",
                "call_id": block["id"], "name": block["name"], "input": text}  # fmt: skip
    return {"id": item.id, "type": "function_call", "status": "completed",
            "call_id": block["id"], "name": block["name"],
            "arguments": json.dumps(block["input"])}  # fmt: skip


def freeform(block: ContentBlock) -> str | None:
    """The text of a scripted custom tool call, None for a JSON one."""
    arguments = block.get("input") if block["type"] == "tool_use" else None
    if isinstance(arguments, dict) and list(arguments) == [FREEFORM]:
        text = arguments[FREEFORM]
        return text if isinstance(text, str) else None
    return None


def _started_item(item: _Item) -> dict[str, Any]:
    whole = done_item(item)
    if item.block["type"] == "text":
        return whole | {"status": "in_progress", "content": []}
    if item.block["type"] == "thinking":
        return whole | {"summary": []}
    if freeform(item.block) is not None:
        return whole | {"status": "in_progress", "input": ""}
    return whole | {"status": "in_progress", "arguments": ""}


def _item_deltas(item: _Item, chunk_chars: int | None) -> Iterator[SseEvent]:
    where: dict[str, object] = {"item_id": item.id, "output_index": item.index}
    block = item.block
    if block["type"] == "text":
        for piece in wire.split_text(block["text"], chunk_chars):
            yield _event(
                "response.output_text.delta",
                where | {"content_index": 0, "delta": piece},
                counted=True,
            )
    elif block["type"] == "thinking":
        for piece in wire.split_text(block["thinking"], chunk_chars):
            kind = "response.reasoning_summary_text.delta"
            yield _event(kind, where | {"summary_index": 0, "delta": piece}, counted=True)
    elif (text := freeform(block)) is not None:
        for piece in wire.split_text(text, chunk_chars or _TOOL_JSON_CHUNK):
            yield _event("response.custom_tool_call_input.delta", where | {"delta": piece})
    else:
        arguments = json.dumps(block["input"])
        for piece in wire.split_text(arguments, chunk_chars or _TOOL_JSON_CHUNK):
            yield _event("response.function_call_arguments.delta", where | {"delta": piece})


def usage(input_tokens: int, reply: Reply) -> dict[str, Any]:
    output = output_tokens_for(reply.content)
    reasoning = sum(
        wire.estimate_tokens(len(b["thinking"])) for b in reply.content if b["type"] == "thinking"
    )
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input_tokens + output,
    }


class ResponsesDialect:
    name = "openai-responses"

    def route(self, request: RecordedRequest) -> Route:
        path = urlsplit(request.path).path
        if request.method == "POST" and path == "/v1/responses":
            return "model"
        return "side" if request.method == "GET" and path == "/v1/models" else "unknown"

    def streams(self, request: RecordedRequest) -> bool:
        return request.stream

    def model_of(self, request: RecordedRequest) -> str:
        return str(request.body.get("model", "gpt-fake"))

    def input_tokens(self, request: RecordedRequest) -> int:
        return body_tokens(request)

    def events(self, reply: Reply, context: ReplyContext) -> Iterator[SseEvent]:
        items = _items(reply, context)
        created = self._response(context, "in_progress", [])
        yield _event("response.created", {"response": created})
        for item in items:
            yield _event(
                "response.output_item.added",
                {"output_index": item.index, "item": _started_item(item)},
            )
            yield from _item_deltas(item, reply.chunk_chars)
            yield _event(
                "response.output_item.done", {"output_index": item.index, "item": done_item(item)}
            )
        yield _event("response.completed", {"response": self.whole(reply, context)})

    def whole(self, reply: Reply, context: ReplyContext) -> dict[str, Any]:
        output = [done_item(item) for item in _items(reply, context)]
        status = "incomplete" if reply.stop_reason == "max_tokens" else "completed"
        body = self._response(context, status, output)
        body["usage"] = usage(context.input_tokens, reply)
        if status == "incomplete":
            body["incomplete_details"] = {"reason": "max_output_tokens"}
        return body

    def _response(self, context: ReplyContext, status: str, output: list[Any]) -> dict[str, Any]:
        return {"id": f"resp_{context.message_id}", "object": "response", "status": status,
                "model": context.model, "output": output}  # fmt: skip

    def error_body(self, error: HttpError, request_id: str) -> dict[str, Any]:
        code = _ERROR_CODES.get(error.status, "server_error")
        return {"error": {"message": error.message, "type": code, "param": None, "code": code}}

    def stream_error(self, fail: Failure, request_id: str) -> SseEvent:
        code = _ERROR_CODES.get(wire.status_for_error_type(fail.error_type), "server_error")
        failed = {"id": f"resp_{request_id}", "object": "response", "status": "failed",
                  "error": {"code": code, "message": fail.message}}  # fmt: skip
        return _event("response.failed", {"response": failed})

    def side_answer(self, request: RecordedRequest) -> dict[str, Any]:
        return {"object": "list", "data": []}

    def user_texts(self, request: RecordedRequest) -> list[str]:
        """Text of the user messages, without the agent's own `<environment_context>`-style
        wrappers."""
        texts: list[str] = []
        for item in request.body.get("input") or []:
            if isinstance(item, dict) and item.get("role") == "user":
                texts.extend(_input_texts(item.get("content")))
        return texts


def _input_texts(content: Any) -> list[str]:
    parts = [{"text": content}] if isinstance(content, str) else content or []
    texts = [p.get("text") for p in parts if isinstance(p, dict)]
    return [t for t in texts if isinstance(t, str) and not t.lstrip().startswith("<")]


def _items(reply: Reply, context: ReplyContext) -> list[_Item]:
    prefixes = {"text": "msg", "thinking": "rs", "tool_use": "fc"}
    return [
        _Item(index, f"{prefixes[block['type']]}_{context.message_id}_{index}", block)
        for index, block in enumerate(reply.content)
        if block["type"] in prefixes
    ]


RESPONSES = ResponsesDialect()
