"""The Gemini API dialect, as Gemini CLI uses it.

`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` is the model call: data-only SSE
events, each a `GenerateContentResponse` with one candidate whose parts are deltas (`thought:
true` marks thinking; a function call arrives whole), the last carrying `finishReason` and
`usageMetadata`. `:generateContent` (the CLI's routing and next-speaker checks, which parse a
JSON answer) and `:countTokens` are side calls with fixed answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

from agentdoc.agents.fakeapi import wire
from agentdoc.agents.fakeapi.dialect import ReplyContext, Route, body_tokens, output_tokens_for
from agentdoc.agents.fakeapi.script import ContentBlock, Failure, HttpError, Reply
from agentdoc.agents.fakeapi.wire import RecordedRequest, SseEvent

_PATH = re.compile(r"/v1(?:beta|alpha)?/models/([^/:]+):(\w+)")
_STATUS: Mapping[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    529: "UNAVAILABLE",
}
_FINISH = {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}
# Parses as "the user speaks next" and as a routing verdict: the side checks then change nothing.
_SIDE_TEXT = json.dumps(
    {
        "reasoning": "offline fake",
        "next_speaker": "user",
        "model_choice": "flash",
        "complexity_reasoning": "offline fake",
        "complexity_score": 1,
    }
)


def _method(request: RecordedRequest) -> tuple[str, str] | None:
    match = _PATH.fullmatch(urlsplit(request.path).path)
    return None if match is None else (match[1], match[2])


def _candidate(parts: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"content": {"role": "model", "parts": parts}, "index": 0, **extra}


def _part(block: ContentBlock, piece: str) -> dict[str, Any]:
    if block["type"] == "thinking":
        return {"text": piece, "thought": True}
    return {"text": piece}


def _pieces(block: ContentBlock, chunk_chars: int | None) -> list[str]:
    # Gemini sends a thought as one summary part (the CLI trims and titles each part it gets),
    # and text as many small deltas.
    if block["type"] == "thinking":
        return (
            wire.split_text(block["thinking"], chunk_chars) if chunk_chars else [block["thinking"]]
        )
    return wire.split_text(str(block.get("text", "")), chunk_chars)


def usage_metadata(prompt: int, reply: Reply) -> dict[str, int]:
    thoughts = sum(
        wire.estimate_tokens(len(b["thinking"])) for b in reply.content if b["type"] == "thinking"
    )
    output = output_tokens_for(reply.content)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": output - thoughts,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": prompt + output,
    }


class GeminiDialect:
    name = "gemini"

    def route(self, request: RecordedRequest) -> Route:
        method = _method(request)
        if request.method != "POST" or method is None:
            return "unknown"
        if method[1] == "streamGenerateContent":
            return "model"
        return "side" if method[1] in ("generateContent", "countTokens") else "unknown"

    def streams(self, request: RecordedRequest) -> bool:
        return True

    def model_of(self, request: RecordedRequest) -> str:
        method = _method(request)
        return "gemini-fake" if method is None else method[0]

    def input_tokens(self, request: RecordedRequest) -> int:
        return body_tokens(request)

    def events(self, reply: Reply, context: ReplyContext) -> Iterator[SseEvent]:
        envelope = {"modelVersion": context.model, "responseId": context.message_id}
        for block in reply.content:
            if block["type"] == "tool_use":
                call = {"name": block["name"], "args": block["input"]}
                yield SseEvent(None, {"candidates": [_candidate([{"functionCall": call}])]})
                continue
            for piece in _pieces(block, reply.chunk_chars):
                data = {"candidates": [_candidate([_part(block, piece)])], **envelope}
                yield SseEvent(None, data, counted=True)
        yield SseEvent(None, self.whole(reply, context) | envelope, closing=True)

    def whole(self, reply: Reply, context: ReplyContext) -> dict[str, Any]:
        """The closing event's body (the stream's deltas already carried the parts)."""
        finish = _FINISH.get(reply.stop_reason or "", "STOP")
        return {
            "candidates": [_candidate([{"text": ""}], finishReason=finish)],
            "usageMetadata": usage_metadata(context.input_tokens, reply),
        }

    def error_body(self, error: HttpError, request_id: str) -> dict[str, Any]:
        status = _STATUS.get(error.status, "UNKNOWN")
        return {"error": {"code": error.status, "message": error.message, "status": status}}

    def stream_error(self, fail: Failure, request_id: str) -> SseEvent:
        status = wire.status_for_error_type(fail.error_type)
        body = {"code": status, "message": fail.message, "status": _STATUS.get(status, "UNKNOWN")}
        return SseEvent(None, {"error": body})

    def side_answer(self, request: RecordedRequest) -> dict[str, Any]:
        method = _method(request)
        if method is not None and method[1] == "countTokens":
            return {"totalTokens": body_tokens(request)}
        return {"candidates": [_candidate([{"text": _SIDE_TEXT}], finishReason="STOP")]}

    def user_texts(self, request: RecordedRequest) -> list[str]:
        """Text parts of the user turns, in order (function responses are not text)."""
        return [
            part["text"]
            for content in request.body.get("contents") or []
            if isinstance(content, dict) and content.get("role") == "user"
            for part in content.get("parts") or []
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]


GEMINI = GeminiDialect()
