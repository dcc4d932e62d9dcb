"""Framing and event parsing of the CLI's stream-json stdout, against real recordings."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from agentdoc.agents.claude.events import (
    ApiRetry,
    AssistantBlock,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Init,
    Interrupted,
    MessageDelta,
    MessageStart,
    MessageStop,
    OtherBlock,
    RedactedThinkingBlock,
    Result,
    StreamError,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBatch,
    ToolUseBlock,
)
from agentdoc.agents.claude.framing import iter_line_batches, iter_lines
from agentdoc.agents.claude.stream import (
    convert,
    load_line,
    parse_line,
    streamed_text,
)
from tests.support.paths import TRANSCRIPTS

ALL_TRANSCRIPTS = sorted(p.stem for p in TRANSCRIPTS.glob("*.ndjson"))


def raw(name: str) -> bytes:
    return (TRANSCRIPTS / f"{name}.ndjson").read_bytes()


def expected_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines[-1] == b"" else lines


def chunked(data: bytes, cuts: list[int]) -> Iterator[bytes]:
    edges = [0, *sorted(cuts), len(data)]
    for start, end in itertools.pairwise(edges):
        yield data[start:end]


def events(name: str) -> list[Event]:
    parsed = (parse_line(line) for line in iter_lines([raw(name)]))
    return [event for event in parsed if event is not None]


def first(name: str, kind: type[Any]) -> Any:
    return next(e for e in events(name) if isinstance(e, kind))


def line(**fields: Any) -> str:
    return json.dumps(fields)


# --- framing --------------------------------------------------------------------------------


def test_unicode_excerpt_has_multibyte_sequences_to_cut() -> None:
    excerpt = unicode_excerpt()
    continuation = [i for i, byte in enumerate(excerpt) if byte & 0xC0 == 0x80]
    assert len(continuation) > 50


def unicode_excerpt() -> bytes:
    """The unicode_markdown assistant line with its neighbours: long, full of UTF-8."""
    lines = raw("unicode_markdown").split(b"\n")
    at = next(
        i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"assistant"') and b"\\r" in ln
    )
    return b"\n".join(lines[at - 1 : at + 2]) + b"\n"


def test_every_two_chunk_split_gives_the_same_lines() -> None:
    data = unicode_excerpt()
    want = expected_lines(data)
    for cut in range(len(data) + 1):
        assert list(iter_lines(chunked(data, [cut]))) == want, cut


def test_one_byte_chunks_give_the_same_lines() -> None:
    data = raw("tool_use_read")
    assert list(iter_lines(data[i : i + 1] for i in range(len(data)))) == expected_lines(data)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["unicode_markdown", "thinking_text", "tool_use_read", "api_429"]),
    seed=st.integers(min_value=0, max_value=2**32),
    pieces=st.integers(min_value=1, max_value=400),
)
def test_random_chunkings_give_the_same_lines(name: str, seed: int, pieces: int) -> None:
    data = raw(name)
    cuts = random.Random(seed).choices(range(len(data) + 1), k=pieces)
    got = list(iter_lines(chunked(data, cuts)))
    assert got == expected_lines(data)
    assert [json.loads(ln) for ln in got]  # every re-framed line is whole, valid UTF-8 JSON


def test_long_stream_reframes_identically_in_small_chunks() -> None:
    data = raw("long_stream")
    cuts = list(range(0, len(data), 4093))
    assert list(iter_lines(chunked(data, cuts))) == expected_lines(data)


def test_line_longer_than_one_mebibyte_survives_whole() -> None:
    text = "ü" * (1 << 20) + "end"
    message = {"id": "msg_1", "model": "m", "content": [{"type": "text", "text": text}]}
    data = line(type="assistant", message=message).encode() + b"\n" + b'{"type":"x"}\n'
    pieces = [data[i : i + 65536] for i in range(0, len(data), 65536)]
    got = list(iter_lines(pieces))
    assert len(got) == 2
    event = parse_line(got[0])
    assert isinstance(event, AssistantBlock)
    assert event.blocks == [TextBlock(text=text)]


@pytest.mark.parametrize(
    ("chunks", "want"),
    [
        ([], []),
        ([b""], []),
        ([b"\n"], [b""]),
        ([b"a\r\nb\r\n"], [b"a", b"b"]),
        ([b"a\r", b"\nb"], [b"a", b"b"]),
        ([b"a\n\n\nb\n"], [b"a", b"", b"", b"b"]),
        ([b"no newline at EOF"], [b"no newline at EOF"]),
        ([b"x", b"y", b"", b"z"], [b"xyz"]),
        ([b"inner\rcr\n"], [b"inner\rcr"]),
    ],
)
def test_framing_edges(chunks: list[bytes], want: list[bytes]) -> None:
    assert list(iter_lines(chunks)) == want


# --- parse_line: skip, reject -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \t",
        "Warning: no stdin data received in 3s, proceeding without it...",
        "[1, 2]",
        "42",
        line(type="some_future_type", x=1),
        line(no_type=True),
        line(type=7),
        line(type="system", subtype="thinking_tokens", estimated_tokens=3),
        line(type="system", subtype="status", status="requesting"),
        line(type="system", subtype="compact_boundary"),
        line(type="control_response", response={"subtype": "success", "request_id": "r"}),
        line(type="stream_event", event={"type": "ping"}),
        line(
            type="stream_event",
            event={"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta"}},
        ),
        line(type="user", message={"role": "user", "content": "echo"}, isReplay=True),
        line(type="user", message={"role": "user", "content": "a stdin prompt"}),
    ],
)
def test_lines_that_are_skipped(text: str) -> None:
    assert parse_line(text) is None
    assert parse_line(text.encode()) is None


@pytest.mark.parametrize(
    "data",
    [
        b"{not json",
        b'{"type":"assistant","message":{"id":"m"',
        b'  {"type": "result", }  ',
        b'{"type":"assistant"}',
        b'{"type":"result","subtype":"success"}',
        b'{"type":"system","subtype":"init"}',
        b'{"type":"stream_event","event":{"type":"content_block_delta","index":"zero",'
        b'"delta":{"type":"text_delta","text":"x"}}}',
        b'{"type":"user","message":{"content":[{"type":"tool_result"}]}}',
        b'{"type":"x","bad":"\xff\xfe"}',
    ],
)
def test_corrupt_protocol_lines_raise(data: bytes) -> None:
    with pytest.raises(StreamError):
        parse_line(data)


def test_invalid_utf8_junk_is_skipped() -> None:
    assert parse_line(b"\xff\xfe not a protocol line") is None


def test_str_and_bytes_parse_alike() -> None:
    for text in raw("tool_use_read").decode().splitlines():
        assert parse_line(text) == parse_line(text.encode())


@pytest.mark.parametrize("name", ALL_TRANSCRIPTS)
def test_every_recorded_transcript_parses(name: str) -> None:
    data = raw(name)
    parsed = [parse_line(ln) for ln in iter_lines([data])]
    assert any(isinstance(e, Result) for e in parsed) or name.startswith(
        ("signal_", "input_stream_json_sigint_race")
    )


@pytest.mark.parametrize("name", ["tool_use_read", "input_stream_json_interrupt", "api_429"])
def test_events_round_trip_through_the_discriminated_union(name: str) -> None:
    adapter: TypeAdapter[Event] = TypeAdapter(Event)
    for event in events(name):
        assert adapter.validate_python(event.model_dump()) == event


# --- parse_line: typed events from real lines -------------------------------------------------


def test_init() -> None:
    init = first("plain_text", Init)
    assert init.session_id == "21805c53-c4ac-4501-889e-2fc1a4e9da48"
    assert init.model == "claude-opus-4-8[1m]"
    assert init.cwd == "/scratch/work"
    assert "Read" in init.tools
    assert init.claude_code_version == "2.1.197"
    assert init.permission_mode == "default"


def test_api_retry() -> None:
    retry = first("api_429", ApiRetry)
    assert (retry.attempt, retry.max_retries, retry.error_status, retry.error) == (
        1,
        2,
        429,
        "rate_limit",
    )
    assert retry.retry_delay_ms == pytest.approx(601.11, abs=0.01)
    assert first("disconnect_midstream", ApiRetry).error_status is None


def test_message_start_delta_stop() -> None:
    evs = events("plain_text")
    start = next(e for e in evs if isinstance(e, MessageStart))
    assert (start.message_id, start.model, start.input_tokens) == (
        "msg_mock_0002",
        "claude-opus-4-8",
        1667,
    )
    delta = next(e for e in evs if isinstance(e, MessageDelta))
    assert (delta.stop_reason, delta.output_tokens) == ("end_turn", 10)
    assert sum(isinstance(e, MessageStop) for e in evs) == 1
    assert [e.index for e in evs if isinstance(e, BlockStop)] == [0]


def test_block_starts() -> None:
    tool = [e for e in events("tool_use_read") if isinstance(e, BlockStart)]
    assert [(b.index, b.block_type) for b in tool[:3]] == [
        (0, "thinking"),
        (1, "text"),
        (2, "tool_use"),
    ]
    assert (tool[2].tool_id, tool[2].tool_name) == ("toolu_mock_0002_2", "Read")
    assert tool[0].tool_id is None
    redacted = first("redacted_thinking", BlockStart)
    assert (redacted.block_type, redacted.data) == ("redacted_thinking", "EncryptedOpaqueBlob==")


def test_delta_kinds_and_concatenation() -> None:
    deltas = [e for e in events("tool_use_read") if isinstance(e, BlockDelta)]
    by_kind: dict[str, str] = {}
    for d in deltas:
        by_kind[d.kind] = by_kind.get(d.kind, "") + d.text
    assert by_kind["thinking"] == "I should read the notes file."
    assert by_kind["signature"] == "mock-sig-1"
    assert by_kind["text"].startswith("Let me read the notes file.")
    assert json.loads(by_kind["input_json"]) == {"file_path": "/scratch/work/notes.txt"}


def test_assistant_blocks() -> None:
    blocks = [e for e in events("tool_use_read") if isinstance(e, AssistantBlock)]
    assert [len(b.blocks) for b in blocks] == [1, 1, 1, 1]
    assert blocks[0].blocks[0] == ThinkingBlock(
        thinking="I should read the notes file.", signature="mock-sig-1"
    )
    assert blocks[1].blocks[0] == TextBlock(text="Let me read the notes file.")
    assert blocks[2].blocks[0] == ToolUseBlock(
        id="toolu_mock_0002_2", name="Read", input={"file_path": "/scratch/work/notes.txt"}
    )
    assert [b.message_id for b in blocks] == ["msg_mock_0002"] * 3 + ["msg_mock_0003"]
    assert all(b.error is None for b in blocks)
    redacted = first("redacted_thinking", AssistantBlock)
    assert redacted.blocks == [RedactedThinkingBlock(data="EncryptedOpaqueBlob==")]


def test_synthetic_error_assistant() -> None:
    notice = first("api_429", AssistantBlock)
    assert notice.error == "rate_limit"
    assert notice.model == "<synthetic>"
    assert notice.blocks == [
        TextBlock(
            text="API Error: Request rejected (429) · Number of request tokens has exceeded "
            "your per-minute rate limit"
        )
    ]


def test_unknown_content_block_is_kept_as_other() -> None:
    message = {"id": "m", "content": [{"type": "server_tool_use", "id": "x"}]}
    event = parse_line(line(type="assistant", message=message))
    assert isinstance(event, AssistantBlock)
    assert event.blocks == [OtherBlock(type="server_tool_use")]


def test_tool_results() -> None:
    read = first("tool_use_read", ToolResult)
    assert read == ToolResult(
        tool_use_id="toolu_mock_0002_2", content="1\tremember the milk\n2\tsecond line\n3\t"
    )
    denied = first("tool_use_denied", ToolResult)
    assert denied.is_error
    assert denied.content.startswith("Claude requested permissions to write")


@pytest.mark.parametrize(
    ("content", "want"),
    [
        ("plain", "plain"),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb"),
        ([{"type": "text", "text": "see"}, {"type": "image", "source": {}}], "see\n[image]"),
        ([], ""),
        (None, ""),
    ],
)
def test_tool_result_content_is_flattened(content: Any, want: str) -> None:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": content}
    event = parse_line(line(type="user", message={"role": "user", "content": [block]}))
    assert event == ToolResult(tool_use_id="t1", content=want)


def test_several_tool_results_in_one_line_are_a_batch() -> None:
    blocks = [
        {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
        {"type": "tool_result", "tool_use_id": "t2", "content": "two", "is_error": True},
    ]
    event = parse_line(line(type="user", message={"role": "user", "content": blocks}))
    assert event == ToolResultBatch(
        results=[
            ToolResult(tool_use_id="t1", content="one"),
            ToolResult(tool_use_id="t2", content="two", is_error=True),
        ]
    )


@pytest.mark.parametrize(
    "content",
    [
        [{"type": "text", "text": "[Request interrupted by user]"}],
        [{"type": "text", "text": "[Request interrupted by user for tool use]"}],
        "[Request interrupted by user]",
    ],
)
def test_interrupt_marker(content: Any) -> None:
    event = parse_line(line(type="user", message={"role": "user", "content": content}))
    assert event == Interrupted()


def test_interrupt_marker_in_a_recording() -> None:
    assert any(isinstance(e, Interrupted) for e in events("signal_sigint_midstream"))


def test_parent_tool_use_id_is_carried() -> None:
    event = parse_line(
        line(type="stream_event", parent_tool_use_id="toolu_9", event={"type": "message_stop"})
    )
    assert event == MessageStop(parent_tool_use_id="toolu_9")


def test_success_result() -> None:
    result = first("plain_text", Result)
    assert result.subtype == "success"
    assert not result.is_error
    assert result.result == "Hello! This is a plain reply from the mock."
    assert (result.input_tokens, result.output_tokens) == (1667, 10)
    assert result.models == ["claude-opus-4-8[1m]"]
    assert result.total_cost_usd == pytest.approx(0.008585)
    assert (result.num_turns, result.duration_ms, result.terminal_reason) == (1, 158, "completed")
    assert result.errors == []
    assert result.permission_denials == 0


def test_input_tokens_include_cache_tokens() -> None:
    usage = {
        "input_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 7,
    }
    event = parse_line(line(type="result", subtype="success", is_error=False, usage=usage))
    assert isinstance(event, Result)
    assert (event.input_tokens, event.output_tokens) == (1105, 7)


@pytest.mark.parametrize(
    ("name", "subtype", "api_status", "reason", "errors"),
    [
        ("api_429", "success", 429, "completed", []),
        ("api_529_overloaded", "success", None, "completed", []),
        (
            "max_turns_1",
            "error_max_turns",
            None,
            "max_turns",
            ["Reached maximum number of turns (1)"],
        ),
        (
            "resume_unknown_id",
            "error_during_execution",
            None,
            None,
            ["No conversation found with session ID: 00000000-0000-4000-8000-000000000000"],
        ),
    ],
)
def test_error_results(
    name: str, subtype: str, api_status: int | None, reason: str | None, errors: list[str]
) -> None:
    result = first(name, Result)
    assert result.is_error
    assert (result.subtype, result.api_error_status, result.terminal_reason) == (
        subtype,
        api_status,
        reason,
    )
    assert result.errors == errors
    assert result.session_id


def test_fractional_duration_is_rounded_not_rejected() -> None:
    event = parse_line(line(type="result", subtype="success", is_error=False, duration_ms=12.7))
    assert isinstance(event, Result)
    assert event.duration_ms == 13


def test_permission_denials_are_counted() -> None:
    assert first("tool_use_denied", Result).permission_denials == 1


# --- the text-delta fast path and batched framing -------------------------------------------


def _expected_fast(raw_line: dict[str, Any]) -> tuple[int, str, str] | None:
    """What the typed path makes of a line, in the fast path's terms."""
    try:
        event = convert(raw_line)
    except StreamError:
        return None
    if not isinstance(event, BlockDelta) or event.kind not in ("text", "thinking"):
        return None
    if event.parent_tool_use_id is not None:
        return None
    return event.index, event.kind, event.text


@pytest.mark.parametrize("name", ALL_TRANSCRIPTS)
def test_streamed_text_agrees_with_the_typed_path_on_every_recording(name: str) -> None:
    for line in iter_lines([raw(name)]):
        loaded = load_line(line)
        if loaded is None:
            continue
        fast = streamed_text(loaded)
        if fast is not None:
            assert fast == _expected_fast(loaded)
        else:  # a delta the fast path declines must be one the typed path drops or rejects
            assert _expected_fast(loaded) is None


def _delta_line(**changes: Any) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "hi"},
        },
        "parent_tool_use_id": None,
    }
    for path, value in changes.items():
        target = line
        *parents, last = path.split("__")
        for key in parents:
            target = target[key]
        target[last] = value
    return line


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, (0, "text", "hi")),
        ({"event__delta": {"type": "thinking_delta", "thinking": "hm"}}, (0, "thinking", "hm")),
        ({"parent_tool_use_id": "toolu_1"}, None),  # a subagent's: dropped by the translator
        ({"event__index": "0"}, None),  # coerced by the model: left to it
        ({"event__index": True}, None),
        ({"event__delta__text": 5}, None),  # rejected by the model
        ({"event__delta": {"type": "signature_delta", "signature": "x"}}, None),
        ({"event__delta": {"type": ["text_delta"]}}, None),
        ({"event__delta": "text"}, None),
        ({"event": {"type": "content_block_stop", "index": 0}}, None),
        ({"type": "assistant"}, None),
    ],
)
def test_streamed_text_takes_only_plain_main_reply_deltas(
    changes: dict[str, Any], expected: tuple[int, str, str] | None
) -> None:
    # A declined line takes the typed path, which gives it the same meaning it always had.
    assert streamed_text(_delta_line(**changes)) == expected


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12))
@settings(max_examples=60)
def test_line_batches_frame_like_iter_lines(cuts: list[int]) -> None:
    data = raw("plain_text")[:400] + b"\r\nlast line without end"
    batches = list(iter_line_batches(chunked(data, cuts)))
    assert all(batches)  # a read that completes no line hands nothing over
    assert [line for batch in batches for line in batch] == list(iter_lines([data]))
