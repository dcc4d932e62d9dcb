"""What differs between the vendors' APIs the fake serves: routes, event streams, bodies.

A dialect is a set of pure functions of a parsed script entry and a recorded request; the
transport writes what they return. One script model serves every dialect: text, thinking and
tool-call blocks, HTTP errors and the failure modes mean the same whichever wire carries them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from agentdoc.agents.fakeapi import wire
from agentdoc.agents.fakeapi.script import ContentBlock, Failure, HttpError, Reply
from agentdoc.agents.fakeapi.wire import RecordedRequest, SseEvent

# "model": a model call that takes the next script entry; "side": a helper call answered the
# same way every time (token counts, routing), so it never eats an entry a test scripted;
# "unknown": a 404.
Route: TypeAlias = Literal["model", "side", "unknown"]


@dataclass(frozen=True)
class ReplyContext:
    """What a reply's body needs besides the script: ids, the model asked for, token counts."""

    message_id: str
    model: str
    input_tokens: int


class Dialect(Protocol):
    """One vendor's wire format; see the module docstring."""

    name: str

    def route(self, request: RecordedRequest) -> Route: ...
    def streams(self, request: RecordedRequest) -> bool: ...
    def model_of(self, request: RecordedRequest) -> str: ...
    def input_tokens(self, request: RecordedRequest) -> int: ...
    def events(self, reply: Reply, context: ReplyContext) -> Iterator[SseEvent]: ...
    def whole(self, reply: Reply, context: ReplyContext) -> dict[str, Any]: ...
    def error_body(self, error: HttpError, request_id: str) -> dict[str, Any]: ...
    def stream_error(self, fail: Failure, request_id: str) -> SseEvent: ...
    def side_answer(self, request: RecordedRequest) -> dict[str, Any]: ...
    def user_texts(self, request: RecordedRequest) -> list[str]: ...


def body_tokens(request: RecordedRequest) -> int:
    """A token estimate of a whole request body, for dialects without Anthropic's shape."""
    return wire.estimate_tokens(len(json.dumps(request.body)))


def output_tokens_for(content: tuple[ContentBlock, ...]) -> int:
    return wire.estimate_tokens(wire.output_chars(content))


class AnthropicDialect:
    """The Anthropic Messages API (`POST /v1/messages`), as Claude Code and OpenCode use it."""

    name = "anthropic"

    def route(self, request: RecordedRequest) -> Route:
        return "model" if wire.is_messages_post(request) else "unknown"

    def streams(self, request: RecordedRequest) -> bool:
        return request.stream

    def model_of(self, request: RecordedRequest) -> str:
        return str(request.body.get("model", "claude-fake"))

    def input_tokens(self, request: RecordedRequest) -> int:
        return wire.input_tokens_for(request.body)

    def events(self, reply: Reply, context: ReplyContext) -> Iterator[SseEvent]:
        return wire.message_events(reply, context.message_id, context.model, context.input_tokens)

    def whole(self, reply: Reply, context: ReplyContext) -> dict[str, Any]:
        return wire.message_json(reply, context.message_id, context.model, context.input_tokens)

    def error_body(self, error: HttpError, request_id: str) -> dict[str, Any]:
        return wire.error_json(error.error_type, error.message, request_id)

    def stream_error(self, fail: Failure, request_id: str) -> SseEvent:
        return SseEvent("error", wire.error_json(fail.error_type, fail.message, request_id))

    def side_answer(self, request: RecordedRequest) -> dict[str, Any]:
        return {}

    def user_texts(self, request: RecordedRequest) -> list[str]:
        return request.user_texts()


ANTHROPIC = AnthropicDialect()
