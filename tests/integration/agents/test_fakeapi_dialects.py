"""The fake's Gemini, OpenAI Responses and Chat Completions dialects: routes, event streams,
bodies, recording.

The same script model as the Anthropic dialect (tests/e2e/test_fakeapi.py); the real Gemini CLI
and codex-acp are driven against these in tests/e2e/test_e2e_acp_fakes.py.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeChatAPI, FakeGeminiAPI, FakeMessagesAPI, FakeResponsesAPI
from agentdoc.agents.fakeapi.chat import CHAT
from agentdoc.agents.fakeapi.dialect import ReplyContext
from agentdoc.agents.fakeapi.gemini import GEMINI
from agentdoc.agents.fakeapi.responses import RESPONSES
from agentdoc.agents.fakeapi.script import HttpError, Reply
from agentdoc.agents.fakeapi.wire import RecordedRequest, checkpoint_due

THINKING = {"type": "thinking", "thinking": "Let me think.", "signature": "s"}
TEXT = {"type": "text", "text": "Hello there."}
TOOL = {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {"file_path": "a"}}
CONTEXT = ReplyContext("m1", "model-x", 40)
STREAM_PATH = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"


def request(method: str, path: str, body: dict[str, Any] | None = None) -> RecordedRequest:
    return RecordedRequest(method, path, {}, body or {})


# --- Gemini -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "route"),
    [
        ("POST", STREAM_PATH, "model"),
        ("POST", "/v1beta/models/gemini-x:generateContent", "side"),
        ("POST", "/v1beta/models/gemini-x:countTokens", "side"),
        ("POST", "/v1beta/models/gemini-x:embedContent", "unknown"),
        ("GET", STREAM_PATH, "unknown"),
        ("POST", "/v1/messages", "unknown"),
    ],
)
def test_gemini_routes(method: str, path: str, route: str) -> None:
    assert GEMINI.route(request(method, path)) == route


def test_gemini_stream_parts() -> None:
    reply = Reply(content=(THINKING, TEXT, TOOL))
    events = list(GEMINI.events(reply, CONTEXT))
    assert {event.name for event in events} == {None}  # data-only SSE events
    parts = [e.data["candidates"][0]["content"]["parts"][0] for e in events]
    assert parts[0] == {"text": "Let me think.", "thought": True}  # a thought arrives whole
    assert parts[1:3] == [{"text": "Hello "}, {"text": "there."}]
    assert parts[3] == {"functionCall": {"name": "write_file", "args": {"file_path": "a"}}}
    last = events[-1]
    assert last.closing and last.data["candidates"][0]["finishReason"] == "STOP"
    usage = last.data["usageMetadata"]
    assert usage["promptTokenCount"] == 40 and usage["thoughtsTokenCount"] >= 1
    assert [e.counted for e in events] == [True, True, True, False, False]


@pytest.mark.parametrize(("stop", "finish"), [(None, "STOP"), ("max_tokens", "MAX_TOKENS"),
                                              ("refusal", "SAFETY")])  # fmt: skip
def test_gemini_finish_reasons(stop: str | None, finish: str) -> None:
    body = GEMINI.whole(Reply(content=(TEXT,), stop_reason=stop), CONTEXT)
    assert body["candidates"][0]["finishReason"] == finish


def test_gemini_errors_and_side_answers() -> None:
    error = GEMINI.error_body(HttpError(429, "rate_limit_error", "slow down"), "r1")
    assert error == {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}
    count = GEMINI.side_answer(request("POST", "/v1beta/models/g:countTokens", {"a": "b" * 80}))
    assert count["totalTokens"] > 0
    side = GEMINI.side_answer(request("POST", "/v1beta/models/g:generateContent"))
    verdict = json.loads(side["candidates"][0]["content"]["parts"][0]["text"])
    assert verdict["next_speaker"] == "user"  # the CLI's check then never continues on its own


def test_gemini_user_texts() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "context"}, {"text": "first"}]},
        {"role": "model", "parts": [{"text": "reply"}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        {"role": "user", "parts": [{"text": "second"}]},
    ]
    texts = GEMINI.user_texts(request("POST", STREAM_PATH, {"contents": contents}))
    assert texts == ["context", "first", "second"]


# --- OpenAI Responses -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "route"),
    [
        ("POST", "/v1/responses", "model"),
        ("GET", "/v1/models", "side"),
        ("POST", "/v1/chat/completions", "unknown"),
        ("GET", "/v1/responses", "unknown"),
    ],
)
def test_responses_routes(method: str, path: str, route: str) -> None:
    assert RESPONSES.route(request(method, path)) == route


def test_responses_stream_items() -> None:
    events = list(RESPONSES.events(Reply(content=(THINKING, TEXT, TOOL)), CONTEXT))
    names = [e.name for e in events]
    added = "response.output_item.added"
    done = "response.output_item.done"
    assert names == [
        "response.created",
        added, "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.delta", done,
        added, "response.output_text.delta", "response.output_text.delta", done,
        added, "response.function_call_arguments.delta", done,
        "response.completed",
    ]  # fmt: skip
    assert all(e.data["type"] == e.name for e in events)
    text = "".join(e.data["delta"] for e in events if e.name == "response.output_text.delta")
    assert text == "Hello there."
    completed = events[-1].data["response"]
    assert events[-1].closing and completed["status"] == "completed"
    call = completed["output"][2]
    assert (call["type"], call["call_id"], call["name"]) == (
        "function_call",
        "toolu_1",
        "write_file",
    )
    assert json.loads(call["arguments"]) == {"file_path": "a"}
    assert completed["usage"]["input_tokens"] == 40
    assert completed["usage"]["output_tokens_details"]["reasoning_tokens"] >= 1


def test_a_freeform_input_is_a_custom_tool_call() -> None:
    patch = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n"
    tool = {
        "type": "tool_use",
        "id": "toolu_2",
        "name": "apply_patch",
        "input": {"freeform": patch},
    }
    events = list(RESPONSES.events(Reply(content=(tool,)), CONTEXT))
    deltas = [e.data["delta"] for e in events if e.name == "response.custom_tool_call_input.delta"]
    assert "".join(deltas) == patch
    call = events[-1].data["response"]["output"][0]
    assert (call["type"], call["name"], call["input"]) == ("custom_tool_call", "apply_patch", patch)


def test_responses_max_tokens_is_incomplete() -> None:
    body = RESPONSES.whole(Reply(content=(TEXT,), stop_reason="max_tokens"), CONTEXT)
    assert body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}


def test_responses_user_texts_skip_the_agents_own_context() -> None:
    items = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "x"}]},
        {"type": "message", "role": "user",
         "content": [{"type": "input_text", "text": "<environment_context>..."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {"type": "function_call_output", "call_id": "c", "output": "done"},
    ]  # fmt: skip
    assert RESPONSES.user_texts(request("POST", "/v1/responses", {"input": items})) == ["hi"]


def test_a_point_past_the_last_delta_fires_before_completed() -> None:
    events = list(RESPONSES.events(Reply(content=(TEXT,)), CONTEXT))
    due = [checkpoint_due(e, 2, 99) for e in events]
    assert due == [False] * (len(events) - 1) + [True]


# --- the servers, through HTTP ------------------------------------------------------------


def _exchange(
    api: FakeMessagesAPI, method: str, path: str, body: dict[str, Any] | None = None
) -> tuple[int, bytes]:
    host, port = api.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, None if body is None else json.dumps(body))
        response = conn.getresponse()
        try:
            return response.status, response.read()
        finally:
            response.close()
    finally:
        conn.close()


def _data(raw: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix(b"data: "))
        for line in raw.splitlines()
        if line.startswith(b"data: ")
    ]


@pytest.fixture
def gemini() -> Iterator[FakeGeminiAPI]:
    with FakeGeminiAPI() as api:
        yield api


@pytest.fixture
def responses() -> Iterator[FakeResponsesAPI]:
    with FakeResponsesAPI() as api:
        yield api


def test_gemini_server_streams_and_side_calls_take_no_entry(gemini: FakeGeminiAPI) -> None:
    gemini.add([TEXT])
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    status, _ = _exchange(gemini, "POST", "/v1beta/models/g:generateContent", body)
    assert status == 200
    status, raw = _exchange(gemini, "POST", STREAM_PATH, body)
    assert status == 200
    chunks = _data(raw)
    text = "".join(c["candidates"][0]["content"]["parts"][0].get("text", "") for c in chunks)
    assert text == "Hello there."
    assert len(gemini.requests) == 1 and len(gemini.all_requests) == 2
    assert gemini.user_texts(gemini.requests[0]) == ["hi"]


def test_gemini_server_http_error_and_mid_stream_error(gemini: FakeGeminiAPI) -> None:
    gemini.add({"status": 400, "message": "bad thing"})
    gemini.add({"content": [TEXT], "fail": {"mode": "sse_error", "after_deltas": 1,
                                            "message": "went wrong"}})  # fmt: skip
    body: dict[str, Any] = {"contents": []}
    status, raw = _exchange(gemini, "POST", STREAM_PATH, body)
    assert status == 400 and json.loads(raw)["error"]["status"] == "INVALID_ARGUMENT"
    status, raw = _exchange(gemini, "POST", STREAM_PATH, body)
    chunks = _data(raw)
    assert status == 200 and chunks[-1]["error"]["message"] == "went wrong"
    assert len(chunks) == 2  # one delta, then the error


def test_responses_server_stream_and_failure(responses: FakeResponsesAPI) -> None:
    responses.add([TEXT])
    responses.add({"content": [TEXT], "fail": {"mode": "sse_error", "after_deltas": 0}})
    body = {"model": "gpt-x", "stream": True, "input": []}
    status, raw = _exchange(responses, "POST", "/v1/responses", body)
    events = _data(raw)
    assert status == 200 and events[-1]["type"] == "response.completed"
    assert events[-1]["response"]["model"] == "gpt-x"
    status, raw = _exchange(responses, "POST", "/v1/responses", body)
    assert _data(raw)[-1]["type"] == "response.failed"
    status, raw = _exchange(responses, "GET", "/v1/models")
    assert status == 200 and json.loads(raw) == {"object": "list", "data": []}
    assert len(responses.requests) == 2


def test_messages_side_calls_get_a_fixed_reply_and_take_no_entry() -> None:
    with FakeMessagesAPI(side_calls=lambda r: not r.body.get("tools")) as api:
        api.add([TEXT])
        title = {"model": "m", "messages": [{"role": "user", "content": "title?"}]}
        status, raw = _exchange(api, "POST", "/v1/messages", title)
        assert status == 200 and json.loads(raw)["content"][0]["text"] == "Side answer"
        real = {**title, "tools": [{"name": "t"}]}
        status, raw = _exchange(api, "POST", "/v1/messages", real)
        assert json.loads(raw)["content"] == [TEXT]
        assert len(api.requests) == 1 and len(api.all_requests) == 2


# --- OpenAI Chat Completions ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "route"),
    [
        ("POST", "/v1/chat/completions", "model"),
        ("POST", "/compatible-mode/v1/chat/completions", "model"),
        ("GET", "/v1/models", "side"),
        ("GET", "/v1/chat/completions", "unknown"),
        ("POST", "/v1/responses", "unknown"),
    ],
)
def test_chat_routes(method: str, path: str, route: str) -> None:
    assert CHAT.route(request(method, path)) == route


def _chat_deltas(events: list[Any]) -> list[dict[str, Any]]:
    return [e.data["choices"][0]["delta"] for e in events if e.data.get("choices")]


def test_chat_stream_carries_reasoning_text_and_tool_calls_then_done() -> None:
    reply = Reply((THINKING, TEXT, TOOL))
    events = list(CHAT.events(reply, CONTEXT))
    deltas = _chat_deltas(events)
    assert deltas[0] == {"role": "assistant", "content": ""}
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "Let me think."
    assert "".join(d.get("content", "") for d in deltas) == "Hello there."
    calls = [c for d in deltas for c in d.get("tool_calls", [])]
    assert calls[0]["id"] == "toolu_1" and calls[0]["function"]["name"] == "write_file"
    assert all(c["index"] == 0 for c in calls)
    arguments = "".join(c["function"]["arguments"] for c in calls)
    assert json.loads(arguments) == {"file_path": "a"}
    closing = [e for e in events if e.closing]
    assert len(closing) == 1 and closing[0].data["choices"][0]["finish_reason"] == "tool_calls"
    assert events[-2].data["choices"] == [] and events[-2].data["usage"]["prompt_tokens"] == 40
    assert events[-1].encode() == b"data: [DONE]\n\n"
    assert all(e.data["model"] == "model-x" for e in events[:-1])


@pytest.mark.parametrize(
    ("stop", "content", "finish"),
    [(None, (TEXT,), "stop"), ("max_tokens", (TEXT,), "length"), (None, (TOOL,), "tool_calls")],
)
def test_chat_finish_reasons(stop: str | None, content: tuple[Any, ...], finish: str) -> None:
    body = CHAT.whole(Reply(content, stop_reason=stop), CONTEXT)
    assert body["choices"][0]["finish_reason"] == finish


def test_chat_whole_message_and_errors() -> None:
    body = CHAT.whole(Reply((THINKING, TEXT, TOOL)), CONTEXT)
    message = body["choices"][0]["message"]
    assert message["content"] == "Hello there." and message["reasoning_content"] == "Let me think."
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"file_path": "a"}
    error = CHAT.error_body(HttpError(429, "rate_limit_error", "slow down"), "r1")
    assert (
        error["error"]["message"] == "slow down" and error["error"]["type"] == "rate_limit_exceeded"
    )


def test_chat_user_texts_take_strings_and_parts() -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "again"}, {"type": "image_url"}]},
    ]
    body = {"messages": messages}
    assert CHAT.user_texts(request("POST", "/v1/chat/completions", body)) == ["hi", "again"]


def test_chat_server_streams_pauses_and_fails() -> None:
    with FakeChatAPI() as chat:
        chat.add([TEXT])
        chat.add({"content": [TEXT], "fail": {"mode": "sse_error", "after_deltas": 1}})
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        status, raw = _exchange(chat, "POST", "/v1/chat/completions", body)
        assert status == 200 and raw.rstrip().endswith(b"data: [DONE]")
        chunks = [json.loads(line[6:]) for line in raw.splitlines()
                  if line.startswith(b"data: {")]  # fmt: skip
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
        assert text == "Hello there."
        status, raw = _exchange(chat, "POST", "/v1/chat/completions", body)
        assert b"[DONE]" not in raw and b'"error"' in raw
        status, raw = _exchange(chat, "GET", "/v1/models")
        assert status == 200 and json.loads(raw)["data"] == []
        assert len(chat.requests) == 2 and chat.user_texts(chat.requests[0]) == ["hi"]
