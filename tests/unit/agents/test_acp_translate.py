"""ACP session updates → neutral events, table-driven, without a process."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agentdoc.agents.acp.quirks import quirks_for
from agentdoc.agents.acp.schema import ContentChunk, PermissionRequest, PromptResult, RpcError
from agentdoc.agents.acp.translate import UpdateTranslator, chunk_text
from agentdoc.agents.base.events import (
    Activity,
    BlockDelta,
    BlockEnd,
    BlockStart,
    MessageStart,
    MessageStop,
    Notice,
    PermissionOption,
    Retract,
    ToolCall,
    ToolUpdate,
    TurnEnd,
    Usage,
)


def msg(text: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": "agent_message_chunk"}
    update["content"] = {"type": "text", "text": text}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def thought(text: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": text}}


def feed(updates: list[dict[str, Any]], agent: str | None = None) -> list[object]:
    translator = UpdateTranslator(quirks_for(agent), "s1")
    events: list[object] = []
    for update in updates:
        events += translator.update(update)
    return [e for e in events if not isinstance(e, Activity)]


STREAMING = [
    pytest.param(
        [msg("Hel"), msg("lo")],
        [MessageStart(), BlockStart(0, "text"), BlockDelta(0, "Hel"), BlockDelta(0, "lo")],
        id="chunks-are-deltas",
    ),
    pytest.param(
        [msg("a", "m1"), msg("b", "m1"), msg("c", "m2")],
        [
            MessageStart("m1"),
            BlockStart(0, "text"),
            BlockDelta(0, "a"),
            BlockDelta(0, "b"),
            BlockEnd(0),
            MessageStop(),
            MessageStart("m2"),
            BlockStart(0, "text"),
            BlockDelta(0, "c"),
        ],
        id="new-message-id-new-message",
    ),
    pytest.param(
        [thought("hmm"), msg("yes")],
        [
            MessageStart(),
            BlockStart(0, "thinking"),
            BlockDelta(0, "hmm"),
            BlockEnd(0),
            BlockStart(1, "text"),
            BlockDelta(1, "yes"),
        ],
        id="thought-then-text",
    ),
    pytest.param(
        [thought("\n\n"), thought("  plan"), thought(" more")],
        [MessageStart(), BlockStart(0, "thinking"), BlockDelta(0, "plan"), BlockDelta(0, " more")],
        id="codex-blank-first-thought",
    ),
    pytest.param(
        [{"sessionUpdate": "plan", "entries": []}, {"sessionUpdate": "brand_new_kind", "x": 1}],
        [],
        id="unknown-kinds-ignored",
    ),
    pytest.param(
        [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}],
        [],
        id="user-chunks-are-not-reply",
    ),
    pytest.param(
        [{"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "x"}}],
        [],
        id="non-text-content-ignored",
    ),
    pytest.param([{"sessionUpdate": "agent_message_chunk"}], [], id="malformed-chunk-ignored"),
    pytest.param(
        [{"sessionUpdate": "notice", "severity": "error", "title": "quota low"}],
        [Notice("quota low")],
        id="error-notice",
    ),
    pytest.param(
        [msg("[MODE_UPDATE] autoEdit")],
        [MessageStart(), BlockStart(0, "text"), BlockDelta(0, "[MODE_UPDATE] autoEdit")],
        id="mode-update-is-text-for-other-agents",
    ),
]


@pytest.mark.parametrize(("updates", "expected"), STREAMING)
def test_updates_become_neutral_events(
    updates: list[dict[str, Any]], expected: list[object]
) -> None:
    assert feed(updates) == expected


GEMINI = [
    pytest.param(
        [thought("****\nThinking about"), thought("****\n it")],
        [
            MessageStart(),
            BlockStart(0, "thinking"),
            BlockDelta(0, "Thinking about"),
            BlockDelta(0, " it"),
        ],
        id="empty-bold-title-stripped",
    ),
    pytest.param(
        [thought("**Planning**\nFirst")],
        [MessageStart(), BlockStart(0, "thinking"), BlockDelta(0, "**Planning**\nFirst")],
        id="real-title-kept",
    ),
    pytest.param([msg("[MODE_UPDATE] autoEdit")], [], id="mode-update-dropped"),
]


@pytest.mark.parametrize(("updates", "expected"), GEMINI)
def test_gemini_decorations(updates: list[dict[str, Any]], expected: list[object]) -> None:
    assert feed(updates, agent="gemini-cli") == expected


def tool(update: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": update, "toolCallId": "t1", **fields}


TOOLS = [
    pytest.param(
        [
            msg("Let me look."),
            tool(
                "tool_call",
                title="Read a.txt",
                kind="read",
                status="pending",
                rawInput={"path": "a.txt"},
            ),
            tool("tool_call_update", status="in_progress"),
            tool(
                "tool_call_update",
                status="completed",
                content=[{"type": "content", "content": {"type": "text", "text": "hello"}}],
            ),
            msg("Done."),
        ],
        [
            MessageStart(),
            BlockStart(0, "text"),
            BlockDelta(0, "Let me look."),
            BlockEnd(0),
            ToolCall("t1", "Read a.txt", {"path": "a.txt"}, "Read a.txt"),
            ToolUpdate("t1", result="hello"),
            BlockStart(1, "text"),
            BlockDelta(1, "Done."),
        ],
        id="call-progress-result",
    ),
    pytest.param(
        [tool("tool_call_update", status="failed", rawOutput={"error": "denied"}, kind="execute")],
        [
            MessageStart(),
            ToolCall("t1", "execute", {}, None),
            ToolUpdate("t1", result='{"error": "denied"}', is_error=True),
        ],
        id="update-before-call-starts-it",
    ),
    pytest.param(
        [
            tool(
                "tool_call",
                title="ls",
                status="completed",
                rawOutput={"command": ["ls"], "exit_code": 0, "formatted_output": "a.txt\n"},
            )
        ],
        [MessageStart(), ToolCall("t1", "ls", {}, "ls"), ToolUpdate("t1", result="a.txt\n")],
        id="codex-command-output",
    ),
    pytest.param(
        [
            tool("tool_call", title="Write", locations=[{"path": "/w/b.txt"}]),
            tool("tool_call", status="completed", rawInput={"content": "x"}),
        ],
        [
            MessageStart(),
            ToolCall("t1", "Write", {"locations": ["/w/b.txt"]}, "Write"),
            ToolUpdate("t1", result="", input={"content": "x"}),
        ],
        id="repeated-call-is-an-update",
    ),
    pytest.param(
        [
            tool(
                "tool_call",
                title="Edit",
                status="completed",
                content=[{"type": "diff", "path": "f", "newText": "n"}],
            )
        ],
        [
            MessageStart(),
            ToolCall(
                "t1",
                "Edit",
                {"locations": ["f"], "changes": [{"path": "f", "new_text": "n"}]},
                "Edit",
            ),
            ToolUpdate("t1", result="f\nn"),
        ],
        id="diff-result",
    ),
]


@pytest.mark.parametrize(("updates", "expected"), TOOLS)
def test_tool_calls(updates: list[dict[str, Any]], expected: list[object]) -> None:
    assert feed(updates) == expected


def finish(result: dict[str, Any], updates: tuple[dict[str, Any], ...] = ()) -> TurnEnd:
    """The end of a turn that answered (a word of reply first) after `updates`."""
    translator = UpdateTranslator(session_id="s1")
    for update in (msg("ok"), *updates):
        translator.update(update)
    end = translator.finish(PromptResult.model_validate(result))[-1]
    assert isinstance(end, TurnEnd)
    return end


GAUGE = {"sessionUpdate": "usage_update", "used": 1200, "size": 200000}

USAGE = [
    pytest.param({"stopReason": "end_turn"}, [], None, id="none"),
    pytest.param(
        {
            "stopReason": "end_turn",
            "usage": {"totalTokens": 15, "inputTokens": 10, "outputTokens": 5},
        },
        [],
        Usage(input_tokens=10, output_tokens=5),
        id="prompt-result-usage",
    ),
    pytest.param(
        {
            "stopReason": "end_turn",
            "_meta": {
                "quota": {"token_count": {"input_tokens": 7, "output_tokens": 3}, "model_usage": []}
            },
        },
        [],
        Usage(input_tokens=7, output_tokens=3),
        id="gemini-quota",
    ),
    pytest.param(
        {"stopReason": "end_turn"},
        [GAUGE],
        Usage(context_used=1200, context_size=200000),
        id="usage-update-gauge",
    ),
    pytest.param(
        {
            "stopReason": "end_turn",
            "usage": {"totalTokens": 3, "inputTokens": 2, "outputTokens": 1},
        },
        [GAUGE],
        Usage(input_tokens=2, output_tokens=1, context_used=1200, context_size=200000),
        id="both",
    ),
]


@pytest.mark.parametrize(("result", "updates", "usage"), USAGE)
def test_usage_forms(
    result: dict[str, Any], updates: list[dict[str, Any]], usage: Usage | None
) -> None:
    assert finish(result, tuple(updates)).usage == usage


def _costed(amount: float, currency: str = "USD") -> dict[str, Any]:
    return {**GAUGE, "cost": {"amount": amount, "currency": currency}}


@pytest.mark.parametrize(
    ("before", "updates", "own", "total"),
    [
        pytest.param(None, [_costed(0.02)], 0.02, 0.02, id="first-turn"),
        # The gauge's cost is the session's so far (ACP): the turn's own is what it added.
        pytest.param(0.05, [_costed(0.07)], 0.02, 0.07, id="resumed-session"),
        pytest.param(0.05, [_costed(0.01), _costed(0.03)], 0.03, 0.03, id="fresh-count"),
        pytest.param(None, [_costed(0.02, "EUR")], None, None, id="not-dollars"),
        pytest.param(None, [GAUGE], None, None, id="no-cost"),
    ],
)
def test_a_turns_own_cost_from_the_sessions_running_cost(
    before: float | None, updates: list[dict[str, Any]], own: float | None, total: float | None
) -> None:
    translator = UpdateTranslator(session_id="s1", cost_before=before)
    for update in updates:
        translator.update(update)
    end = translator.finish(PromptResult.model_validate({"stopReason": "end_turn"}))[-1]
    assert isinstance(end, TurnEnd) and end.usage is not None
    assert end.usage.cost_usd == pytest.approx(own) if own else end.usage.cost_usd is None
    assert end.usage.session_cost_usd == total


@pytest.mark.parametrize(
    ("stop", "expected", "interrupted"),
    [
        ("end_turn", "end_turn", False),
        ("max_tokens", "max_tokens", False),
        ("max_turn_requests", "max_turn_requests", False),
        ("refusal", "refusal", False),
        ("cancelled", "cancelled", True),
        ("something_new", "end_turn", False),
    ],
)
def test_stop_reasons(stop: str, expected: str, interrupted: bool) -> None:
    end = finish({"stopReason": stop})
    assert (end.stop_reason, end.interrupted, end.session_id) == (expected, interrupted, "s1")


def test_gemini_model_from_meta() -> None:
    meta = {
        "quota": {
            "token_count": {},
            "model_usage": [{"model": "gemini-2.5-pro", "token_count": {}}],
        }
    }
    assert finish({"stopReason": "end_turn", "_meta": meta}).model == "gemini-2.5-pro"


@pytest.mark.parametrize(
    ("updates", "failed"),
    [
        ([], True),  # not a word: an API error the agent kept to itself
        ([thought("Hmm.")], False),
        ([msg("ok")], False),
    ],
    ids=["nothing", "thinking", "text"],
)
def test_a_turn_ended_without_a_word_failed(updates: list[dict[str, Any]], failed: bool) -> None:
    translator = UpdateTranslator(session_id="s1")
    for update in updates:
        translator.update(update)
    end = translator.finish(PromptResult(stop_reason="end_turn"))[-1]
    assert isinstance(end, TurnEnd)
    assert (end.stop_reason == "error") is failed
    assert ("without a word" in (end.error or "")) is failed


def test_finish_closes_the_open_message() -> None:
    translator = UpdateTranslator(session_id="s1")
    translator.update(msg("hi"))
    events = translator.finish(PromptResult(stop_reason="end_turn"))
    assert events[:2] == [BlockEnd(0), MessageStop()]
    assert isinstance(events[2], TurnEnd)


def test_failure_keeps_the_gauge_and_says_what_failed() -> None:
    translator = UpdateTranslator(session_id="s1")
    translator.update(GAUGE)
    (end,) = translator.fail("gemini failed: 500")
    assert end == TurnEnd(
        "error",
        session_id="s1",
        usage=Usage(context_used=1200, context_size=200000),
        error="gemini failed: 500",
    )


def test_permission_request_carries_the_options_and_the_paths() -> None:
    request = PermissionRequest.model_validate(
        {
            "sessionId": "s1",
            "toolCall": {
                "toolCallId": "t9",
                "title": "Write notes.md",
                "kind": "edit",
                "rawInput": {"filePath": "/w/notes.md", "content": "x"},
                "locations": [{"path": "/w/notes.md"}],
            },
            "options": [
                {"optionId": "once", "name": "Allow", "kind": "allow_once"},
                {"optionId": "always", "name": "Always", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        }
    )
    asked = UpdateTranslator().permission("acp-1", request)
    assert asked.request_id == "acp-1"
    assert asked.tool_id == "t9"
    assert asked.tool_name == asked.description == "Write notes.md"
    assert asked.input == {"filePath": "/w/notes.md", "content": "x", "locations": ["/w/notes.md"]}
    assert asked.options == (
        PermissionOption("once", "Allow", "allow_once"),
        PermissionOption("always", "Always", "allow_always"),
        PermissionOption("no", "Reject", "reject_once"),
    )


def test_a_permission_names_the_tool_its_call_announced() -> None:
    translator = UpdateTranslator()
    translator.update({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "write"})
    request = PermissionRequest.model_validate(
        {
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1", "title": "/w/out.txt", "kind": "edit"},
            "options": [{"optionId": "once", "name": "Allow", "kind": "allow_once"}],
        }
    )
    asked = translator.permission("acp-1", request)
    assert (asked.tool_name, asked.description) == ("write", "/w/out.txt")


def test_what_shows_nothing_still_counts_as_activity() -> None:
    translator = UpdateTranslator()
    for update in (
        {"sessionUpdate": "plan", "entries": []},
        GAUGE,
        {"sessionUpdate": "agent_message_chunk"},
    ):
        assert translator.update(update) == [Activity()]


@pytest.mark.parametrize(
    ("error", "described"),
    [
        ({"code": -32603, "message": "Internal error"}, "Internal error"),
        (
            {"code": -32603, "message": "Internal error", "data": {"details": "No sessions"}},
            "Internal error: No sessions",
        ),
        (
            {
                "code": -32603,
                "message": "Internal error",
                "data": {"message": '{"error": {"message": "quota exceeded", "type": "x"}}'},
            },
            "Internal error: quota exceeded",
        ),
        ({"code": -32603, "message": "Internal error", "data": "boom"}, "Internal error: boom"),
        ({"code": 7, "message": ""}, "error 7"),
        # OpenCode 1.18 puts the vendor's error event, met mid-stream, in its message whole.
        (
            {
                "code": -32603,
                "message": 'Internal error: {"type":"invalid_request_error","message":"no"}',
                "data": {"service": "session", "errorName": "UnknownError"},
            },
            "Internal error: no",
        ),
        (
            {
                "code": -32603,
                "message": 'Internal error: {"message":"no","type":"x","param":null,"code":400}',
            },
            "Internal error: no",
        ),
        (
            {
                "code": -32603,
                "message": "Internal error: RequestExecutor.execute: Provider request failed with "
                'HTTP 400: {"type": "error", "error": {"type": "invalid_request_error", '
                '"message": "no"}, "request_id": "req_1"}',
            },
            "Internal error: RequestExecutor.execute: Provider request failed with HTTP 400: no",
        ),
        # Gemini CLI answers with the API's error body as the message.
        (
            {
                "code": 400,
                "message": '{"error":{"code":400,"message":"no","status":"INVALID_ARGUMENT"}}',
            },
            "no",
        ),
        (
            {"code": -32603, "message": "Internal error: messages.0: {not json} stays"},
            "Internal error: messages.0: {not json} stays",
        ),
    ],
    ids=[
        "plain",
        "gemini-details",
        "codex-api-body",
        "string-data",
        "empty",
        "opencode-anthropic-event",
        "opencode-chat-event",
        "opencode-native-body",
        "gemini-api-body",
        "braces-not-json",
    ],
)
def test_an_error_answer_says_what_the_agent_said(error: dict[str, Any], described: str) -> None:
    assert RpcError.model_validate(error).describe() == described


@pytest.mark.parametrize(
    "update",
    [
        {"content": {"type": "text", "text": "hi"}},
        {"content": {"type": "text", "text": "hi"}, "messageId": "m1"},
        {"content": {"type": "image", "data": "x"}},
        {"content": {"type": "text"}},
        {"content": {"type": "text", "text": "hi"}, "message_id": "m2"},
        {"content": {"type": "text", "text": "hi", "extra": 1}, "messageId": None},
    ],
)
def test_chunk_text_reads_plain_chunks_as_the_model_does(update: dict[str, Any]) -> None:
    chunk = ContentChunk.model_validate(update)
    model = (chunk.content.text if chunk.content.type == "text" else None), chunk.message_id
    assert chunk_text(update) == model


@pytest.mark.parametrize(
    "update",
    [{"content": {"type": "text", "text": 5}}, {"content": "hi"}, {}, {"content": {"text": "x"}}],
)
def test_chunk_text_leaves_odd_chunks_to_the_model(update: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        chunk_text(update)


def test_codex_api_error_sent_as_text_ends_the_turn_failed() -> None:
    """codex-acp 2 says `systemError`, sends the API's error body as text, then `end_turn`."""
    translator = UpdateTranslator(quirks_for("@agentclientprotocol/codex-acp"), "s", None, "codex")
    status = {"codex": {"threadStatus": {"type": "systemError"}}}
    translator.update({"sessionUpdate": "session_info_update", "_meta": status})
    body = '{"error": {"message": "fake refusal", "type": "invalid_request_error"}}\n\n'
    assert translator.update(msg(body)) == [Activity()]  # not reply text
    events = translator.finish(PromptResult(stop_reason="end_turn"))
    end = events[-1]
    assert isinstance(end, TurnEnd)
    assert (end.stop_reason, end.error) == ("error", "codex failed: fake refusal")


def test_reply_text_that_only_repeats_the_error_is_taken_back() -> None:
    translator = UpdateTranslator(name="claude-acp")
    translator.update(msg("API Error: 400 bad request", "m1"))
    events = translator.fail("claude-acp failed: Internal error: API Error: 400 bad request")
    assert events[0] == Retract("m1")
    kept = UpdateTranslator()
    kept.update(msg("Half a real answer", "m2"))
    assert not any(isinstance(e, Retract) for e in kept.fail("claude-acp failed: overloaded"))


def test_gemini_thought_chunks_get_back_the_spaces_it_trimmed() -> None:
    translator = UpdateTranslator(quirks_for("gemini-cli"))
    parts = ["****\nGemini", "****\nconsiders", "****\n the", "****\nquestion.", "**Next**\nMore."]
    events = [e for p in parts for e in translator.update(thought(p))]
    joined = "".join(e.text for e in events if isinstance(e, BlockDelta))
    assert joined == "Gemini considers the question.\n\n**Next**\nMore."
    other = UpdateTranslator()  # agents that send deltas as they are keep them as they are
    deltas = [e for p in ("Gem", "ini") for e in other.update(thought(p))]
    assert "".join(e.text for e in deltas if isinstance(e, BlockDelta)) == "Gemini"


def test_an_approval_shows_what_the_agents_diff_will_write() -> None:
    request = PermissionRequest.model_validate(
        {
            "sessionId": "s",
            "toolCall": {
                "toolCallId": "t1",
                "title": "Writing to notes.txt",
                "kind": "edit",
                "content": [{"type": "diff", "path": "/w/notes.txt", "oldText": None,
                             "newText": "hello\n"}],
            },
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
        }
    )  # fmt: skip
    asked = UpdateTranslator().permission("acp-1", request)
    assert asked.input["changes"] == [{"path": "/w/notes.txt", "new_text": "hello\n"}]
    assert asked.input["locations"] == ["/w/notes.txt"]
