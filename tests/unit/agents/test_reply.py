"""The CLI's events through the translator into the neutral reply builder, table-driven over real
CLI recordings and the mock's scripts."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

import pytest

from agentdoc.agents import Reply, Retrying, TextPart, ThinkingPart, ToolPart
from agentdoc.agents import ReplyBuilder as NeutralBuilder
from agentdoc.agents.claude.events import (
    ApiRetry,
    AssistantBlock,
    BlockDelta,
    BlockStart,
    Event,
    Init,
    MessageStart,
    MessageStop,
    Result,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBatch,
    ToolUseBlock,
)
from agentdoc.agents.claude.framing import iter_lines
from agentdoc.agents.claude.stream import parse_line
from agentdoc.agents.claude.translate import Translator, exit_failure, result_failure
from tests.support.paths import TRANSCRIPTS

# Exit codes of the recorded runs (from their capture metadata).
EXIT_CODES = {
    "signal_sigterm_midstream": 143,
    "signal_sigterm_before_first_byte": 143,
    **{
        name: 1
        for name in (
            "api_429",
            "api_500",
            "api_529_overloaded",
            "invalid_api_key",
            "api_400_invalid",
            "connection_refused",
            "disconnect_midstream",
            "truncated_stream",
            "sse_error_midstream",
            "disconnect_then_recover_no_fallback",
            "max_turns_1",
            "resume_unknown_id",
        )
    },
}


class ReplyBuilder:
    """The CLI's events of one turn → translator → the neutral builder, as a turn feeds them."""

    def __init__(self) -> None:
        self.translator = Translator()
        self.builder = NeutralBuilder()
        self.result: Result | None = None  # the CLI's own result line, once it came

    def feed(self, event: Event) -> None:
        if isinstance(event, Result) and not self.translator.ended:
            self.result = event
        for neutral in self.translator.feed(event):
            self.builder.feed(neutral)

    def finish(self, *, exit_code: int | None = None, stderr: str = "") -> None:
        """The process ended (``close``): without a result, how it exited ends the turn."""
        if not self.builder.ended:
            self.builder.feed(self.translator.no_result(exit_code, stderr))
        self.builder.finish()

    @property
    def reply(self) -> Reply:
        return self.builder.reply


def events(name: str) -> list[Event]:
    data = (TRANSCRIPTS / f"{name}.ndjson").read_bytes()
    parsed = (parse_line(line) for line in iter_lines([data]))
    return [event for event in parsed if event is not None]


def built(name: str) -> ReplyBuilder:
    builder = ReplyBuilder()
    for event in events(name):
        builder.feed(event)
    builder.finish(exit_code=EXIT_CODES.get(name, 0))
    return builder


def build(name: str) -> Reply:
    return built(name).reply


def script_attempts(name: str) -> list[tuple[list[dict[str, Any]], bool]]:
    """The mock's responses in order, as (content blocks, deliberately failed)."""
    entries = json.loads((TRANSCRIPTS / f"{name}.script.json").read_text(encoding="utf-8"))
    return [
        (entry["content"], "fail" in entry) if isinstance(entry, dict) else (entry, False)
        for entry in entries
    ]


def script_texts(name: str) -> list[str]:
    """Text blocks of the responses that were meant to succeed, in order."""
    return [
        block["text"]
        for blocks, failed in script_attempts(name)
        if not failed
        for block in blocks
        if block["type"] == "text"
    ]


def failed_texts(name: str) -> list[str]:
    return [
        block["text"]
        for blocks, failed in script_attempts(name)
        if failed
        for block in blocks
        if block["type"] == "text"
    ]


def text_parts(reply: Reply) -> list[str]:
    return [part.text for part in reply.parts if isinstance(part, TextPart)]


# --- successful turns -----------------------------------------------------------------------

SUCCESS = [
    "plain_text",
    "plain_text_nopartial",
    "thinking_text",
    "thinking_text_nopartial",
    "redacted_thinking",
    "multi_text",
    "multi_text_nopartial",
    "tool_use_read",
    "tool_use_read_nopartial",
    "tool_use_denied",
    "unicode_markdown",
    "long_stream",
    "long_stream_nopartial",
]
RECOVERED = [
    "disconnect_then_recover",
    "sse_error_then_recover",
    "hang_midstream",
    "hang_then_truncate",
]


@pytest.mark.parametrize("name", SUCCESS + RECOVERED)
def test_final_text_is_exactly_what_the_model_sent(name: str) -> None:
    reply = build(name)
    assert text_parts(reply) == script_texts(name)
    assert reply.text().encode("utf-8") == "".join(script_texts(name)).encode("utf-8")
    assert all(part.committed for part in reply.parts if isinstance(part, TextPart))
    assert reply.error is None
    assert not reply.interrupted
    assert reply.done
    assert reply.stop_reason == "end_turn"
    assert reply.retry is None


@pytest.mark.parametrize("name", RECOVERED)
def test_abandoned_first_attempt_leaves_no_trace(name: str) -> None:
    reply = build(name)
    garbage = failed_texts(name)[0].split()[0]  # "First", "text", ...: the first streamed word
    assert garbage not in reply.text()
    assert len(reply.parts) == 1


@pytest.mark.parametrize("name", ["plain_text", "multi_text", "tool_use_read", "thinking_text"])
def test_nopartial_variant_gives_the_same_reply(name: str) -> None:
    streamed = build(name)
    whole = build(f"{name}_nopartial")
    assert whole.parts == streamed.parts
    assert [(t.text, t.redacted) for t in whole.thinking] == [
        (t.text, t.redacted) for t in streamed.thinking
    ]


@pytest.mark.parametrize(
    ("name", "thinking"),
    [
        (
            "thinking_text",
            [
                ThinkingPart(
                    "The user greets me. I should answer briefly.\nSecond thinking line.",
                    False,
                    True,
                )
            ],
        ),
        ("redacted_thinking", [ThinkingPart("", True, True)]),
        ("multi_text", [ThinkingPart("plan", False, True)]),
        ("unicode_markdown", [ThinkingPart("Thinking with 漢字 and ## User inside.", False, True)]),
        ("plain_text", []),
    ],
)
def test_thinking_is_kept_apart_from_the_text(name: str, thinking: list[ThinkingPart]) -> None:
    reply = build(name)
    assert list(reply.thinking) == thinking
    assert all(t.text not in reply.text() for t in thinking if t.text)


def test_multi_text_blocks_are_separate_parts() -> None:
    assert build("multi_text").parts == (
        TextPart("First text block. ", True),
        TextPart("Second text block.\n", True),
        TextPart("Third text block.", True),
    )


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        (
            "tool_use_read",
            ToolPart(
                "toolu_mock_0002_2",
                "Read",
                {"file_path": "/scratch/work/notes.txt"},
                "1\tremember the milk\n2\tsecond line\n3\t",
                False,
            ),
        ),
        (
            "tool_use_denied",
            ToolPart(
                "toolu_mock_0002_1",
                "Write",
                {"file_path": "/scratch/work/out.txt", "content": "x"},
                "Claude requested permissions to write to /scratch/work/out.txt, but you "
                "haven't granted it yet.",
                True,
            ),
        ),
    ],
)
def test_tool_turn_keeps_text_tool_text_in_order(name: str, tool: ToolPart) -> None:
    before, after = script_texts(name)
    assert build(name).parts == (TextPart(before, True), tool, TextPart(after, True))


def test_metadata_of_a_successful_turn() -> None:
    reply = build("thinking_text")
    assert reply.session_id is not None
    assert reply.model == "claude-opus-4-8"  # the `[1m]` window tag of `init` dropped
    assert reply.output_chars == len(reply.text()) + len(reply.thinking[0].text)
    assert reply.finished


# --- failed turns ---------------------------------------------------------------------------

API_ERRORS = {
    "api_429": "API Error: Request rejected (429) · Number of request tokens has exceeded your "
    "per-minute rate limit",
    "api_500": "API Error: 500 Internal server error.",
    "api_529_overloaded": "API Error: Repeated 529 Overloaded errors.",
    "invalid_api_key": "Invalid API key · Fix external API key",
    "api_400_invalid": "API Error: 400 messages: text content blocks must be non-empty",
    "connection_refused": "API Error: Unable to connect to API (ConnectionRefused)",
    "disconnect_midstream": "API Error: Unable to connect to API (ECONNRESET)",
    "truncated_stream": "API Error: Unable to connect to API (ECONNRESET)",
    "sse_error_midstream": "API Error: Repeated 529 Overloaded errors.",
    "disconnect_then_recover_no_fallback": "API Error: Connection to the API was lost",
}


@pytest.mark.parametrize(("name", "message"), API_ERRORS.items())
def test_api_failures_give_an_error_and_no_content(name: str, message: str) -> None:
    reply = build(name)
    assert reply.error is not None and reply.error.startswith(message)
    assert reply.parts == ()
    assert reply.thinking == ()
    assert reply.text() == ""
    assert not reply.interrupted
    assert reply.stop_reason == "error"
    assert reply.retry is None


@pytest.mark.parametrize(
    "name", ["disconnect_midstream", "truncated_stream", "sse_error_midstream"]
)
def test_partial_text_of_a_failed_stream_was_previewed_then_rolled_back(name: str) -> None:
    builder = ReplyBuilder()
    previewed = ""
    for event in events(name):
        builder.feed(event)
        previewed = max(previewed, builder.reply.text(), key=len)
    assert previewed and failed_texts(name)[0].startswith(previewed)
    assert builder.reply.text() == ""


def test_max_turns_is_an_error_after_the_tool_ran() -> None:
    reply = build("max_turns_1")
    assert reply.error == "Reached maximum number of turns (1)"
    assert text_parts(reply) == ["Let me read the notes file."]
    tool = reply.parts[1]
    assert isinstance(tool, ToolPart) and tool.result is not None


def test_unknown_resume_id_is_an_error_with_the_session_from_the_result() -> None:
    reply = build("resume_unknown_id")
    assert reply.error is not None and reply.error.startswith("No conversation found")
    assert reply.session_id == "00000000-0000-4000-8000-000000000000"
    assert reply.parts == ()
    assert not reply.interrupted


# --- interrupted turns ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "committed", "has_result"),
    [
        ("signal_sigint_midstream", True, True),
        ("input_stream_json_interrupt", True, True),
        ("signal_sigterm_midstream", False, False),
        ("input_stream_json_sigint_race_noresult", False, False),
    ],
)
def test_interrupted_midstream_keeps_the_partial_text(
    name: str, committed: bool, has_result: bool
) -> None:
    builder = built(name)
    reply = builder.reply
    assert reply.interrupted
    assert reply.error is None
    assert reply.parts == (TextPart("s0 ", committed),)
    assert (builder.result is not None) == has_result
    assert reply.stop_reason == ("cancelled" if has_result else "error")
    assert reply.thinking[0].text.startswith("slow thinking")
    assert reply.done


@pytest.mark.parametrize(
    "name", ["signal_sigint_before_first_byte", "signal_sigterm_before_first_byte"]
)
def test_interrupted_before_the_first_byte_has_nothing(name: str) -> None:
    reply = build(name)
    assert reply.interrupted
    assert reply.parts == ()
    assert reply.error is None
    assert reply.session_id is not None


def test_not_done_before_result_or_finish() -> None:
    builder = ReplyBuilder()
    for event in events("signal_sigterm_midstream"):
        builder.feed(event)
    assert not builder.reply.done
    assert not builder.reply.interrupted
    builder.finish(exit_code=143)
    assert builder.reply.done and builder.reply.interrupted


def test_aborted_result_alone_marks_the_turn_interrupted() -> None:
    builder = ReplyBuilder()
    builder.feed(
        Result(
            subtype="error_during_execution",
            is_error=True,
            terminal_reason="aborted_streaming",
            errors=["[ede_diagnostic] result_type=user"],
        )
    )
    assert builder.reply.interrupted
    assert builder.reply.error is None


def test_session_already_in_use_is_an_error() -> None:
    builder = ReplyBuilder()
    builder.finish(exit_code=1, stderr="Error: Session ID 2222 is already in use.\n")
    assert builder.reply.error == "Error: Session ID 2222 is already in use."
    assert builder.reply.interrupted


def test_finish_is_idempotent() -> None:
    builder = ReplyBuilder()
    builder.finish(exit_code=1, stderr="first")
    builder.finish(exit_code=1, stderr="second")
    assert builder.reply.error == "first"


# --- one builder per turn -------------------------------------------------------------------


def turns(name: str) -> list[list[Event]]:
    """Split a long-lived (stream-json input) run into turns at each result."""
    out: list[list[Event]] = [[]]
    for event in events(name):
        out[-1].append(event)
        if isinstance(event, Result):
            out.append([])
    return [turn for turn in out if turn]


@pytest.mark.parametrize(
    ("name", "want"),
    [
        (
            "input_stream_json",
            [["Answer to the first stdin message."], ["Answer to the second stdin message."]],
        ),
        ("input_stream_json_interrupt", [["s0 "], ["After interrupt."]]),
    ],
)
def test_stream_json_input_runs_one_builder_per_turn(name: str, want: list[list[str]]) -> None:
    got = []
    for turn in turns(name):
        builder = ReplyBuilder()
        for event in turn:
            builder.feed(event)
        got.append(text_parts(builder.reply))
    assert got == want


def test_events_after_the_result_are_ignored() -> None:
    builder = ReplyBuilder()
    for event in events("input_stream_json"):
        builder.feed(event)
    assert builder.reply.text() == "Answer to the first stdin message."
    assert builder.result is not None
    assert builder.result.result == "Answer to the first stdin message."


# --- the tentative preview ------------------------------------------------------------------


@pytest.mark.parametrize("name", [*SUCCESS, "signal_sigint_midstream", "signal_sigterm_midstream"])
def test_preview_only_grows_by_appending(name: str) -> None:
    builder = ReplyBuilder()
    previous = ""
    for event in events(name):
        builder.feed(event)
        current = builder.reply.text()
        assert current.startswith(previous)
        previous = current
    builder.finish(exit_code=EXIT_CODES.get(name, 0))
    assert builder.reply.text() == previous


def test_preview_is_tentative_until_the_assistant_line() -> None:
    builder = ReplyBuilder()
    seen_tentative = False
    for event in events("long_stream"):
        builder.feed(event)
        parts = builder.reply.parts
        if isinstance(event, BlockDelta):
            assert parts == (TextPart(builder.reply.text(), committed=False),)
            seen_tentative = True
        if isinstance(event, AssistantBlock):
            assert len(parts) == 1 and isinstance(parts[0], TextPart) and parts[0].committed
    assert seen_tentative


@pytest.mark.parametrize("name", RECOVERED)
def test_preview_of_the_failed_attempt_is_replaced_by_the_retry(name: str) -> None:
    builder = ReplyBuilder()
    history = []
    for event in events(name):
        builder.feed(event)
        history.append(builder.reply.text())
    first_attempt = failed_texts(name)[0]
    partial = [text for text in history if text and first_attempt.startswith(text)]
    assert partial, "the first attempt was shown while it streamed"
    final = "".join(script_texts(name))
    assert history[-1] == final
    # Apart from the one switch to the retry's text, the preview only grew.
    switches = [(a, b) for a, b in itertools.pairwise(history) if not b.startswith(a)]
    assert switches == [(partial[-1], final)]


def test_snapshots_are_immutable() -> None:
    builder = ReplyBuilder()
    evs = events("plain_text")
    for event in evs[:5]:
        builder.feed(event)
    early = builder.reply
    early_text = early.text()
    for event in evs[5:]:
        builder.feed(event)
    assert early.text() == early_text
    assert builder.reply.text() != early_text


# --- rules not covered by a recording (the shapes are the recorded ones) ---------------------


def stream_of(message_id: str, blocks: list[str], *, stop: bool) -> list[Event]:
    """A streamed message with text blocks, each previewed by one delta then committed."""
    out: list[Event] = [MessageStart(message_id=message_id)]
    for index, text in enumerate(blocks):
        out += [
            BlockStart(index=index, block_type="text"),
            BlockDelta(index=index, kind="text", text=text),
            AssistantBlock(message_id=message_id, blocks=[TextBlock(text=text)]),
        ]
    return [*out, MessageStop()] if stop else out


def feed_all(evs: list[Event]) -> ReplyBuilder:
    builder = ReplyBuilder()
    for event in evs:
        builder.feed(event)
    return builder


def test_failed_message_loses_its_committed_blocks_when_a_fallback_repeats_them() -> None:
    failed = [
        *stream_of("msg_1", ["Para one. "], stop=False),
        BlockStart(index=1, block_type="text"),
        BlockDelta(index=1, kind="text", text="Para t"),
    ]
    fallback: list[Event] = [
        AssistantBlock(message_id="msg_2", blocks=[TextBlock(text="Para one. ")]),
        AssistantBlock(message_id="msg_2", blocks=[TextBlock(text="Para two.")]),
    ]
    reply = feed_all(failed + fallback).reply
    assert text_parts(reply) == ["Para one. ", "Para two."]


def test_finished_message_survives_the_next_message() -> None:
    evs = stream_of("msg_1", ["Before tool. "], stop=True) + stream_of(
        "msg_2", ["After."], stop=True
    )
    assert text_parts(feed_all(evs).reply) == ["Before tool. ", "After."]


def test_new_streamed_attempt_rolls_back_the_unfinished_one() -> None:
    evs = stream_of("msg_1", ["Abandoned"], stop=False) + stream_of("msg_2", ["Kept."], stop=True)
    assert text_parts(feed_all(evs).reply) == ["Kept."]


def test_retry_notice_shows_until_content_streams() -> None:
    builder = ReplyBuilder()
    retry = ApiRetry(attempt=1, max_retries=3, retry_delay_ms=500.0, error_status=529)
    builder.feed(Init(session_id="s"))
    builder.feed(retry)
    assert builder.reply.retry == Retrying(1, 3, 500.0, error_status=529)
    builder.feed(MessageStart(message_id="msg_1"))
    assert builder.reply.retry is None


def test_retry_drops_the_preview_and_a_fallback_replaces_the_failed_message() -> None:
    builder = feed_all(stream_of("msg_1", ["Committed. ", "Half"], stop=False)[:-1])
    assert builder.reply.text() == "Committed. Half"
    builder.feed(ApiRetry(attempt=1, max_retries=2, retry_delay_ms=1.0))
    assert builder.reply.text() == "Committed. "
    builder.feed(AssistantBlock(message_id="msg_2", blocks=[TextBlock(text="Committed. Whole.")]))
    assert text_parts(builder.reply) == ["Committed. Whole."]


def test_error_after_committed_blocks_keeps_them_as_the_partial_reply() -> None:
    evs = [
        *stream_of("msg_1", ["Kept paragraph. "], stop=False),
        BlockStart(index=1, block_type="text"),
        BlockDelta(index=1, kind="text", text="dangl"),
        ApiRetry(attempt=1, max_retries=1, retry_delay_ms=1.0),
        AssistantBlock(
            message_id="e", model="<synthetic>", error="unknown", blocks=[TextBlock(text="boom")]
        ),
        Result(subtype="success", is_error=True, result="boom"),
    ]
    reply = feed_all(evs).reply
    assert reply.parts == (TextPart("Kept paragraph. ", True),)
    assert reply.error == "boom"


def test_error_notice_drops_the_preview_at_once() -> None:
    builder = ReplyBuilder()
    for event in events("disconnect_then_recover_no_fallback"):
        builder.feed(event)
        if isinstance(event, AssistantBlock):
            break
    assert builder.reply.text() == ""
    assert builder.reply.error is not None
    assert builder.reply.stop_reason is None


def test_result_drops_a_dangling_preview() -> None:
    evs: list[Event] = [
        MessageStart(message_id="m"),
        BlockStart(index=0, block_type="text"),
        BlockDelta(index=0, kind="text", text="never confirmed"),
    ]
    builder = feed_all(evs)
    assert builder.reply.text() == "never confirmed"
    builder.feed(Result(subtype="success", is_error=False))
    assert builder.reply.text() == ""


def test_batched_tool_results_fill_their_tools() -> None:
    builder = ReplyBuilder()
    builder.feed(
        AssistantBlock(
            message_id="m",
            blocks=[ToolUseBlock(id="a", name="Read", input={}), ToolUseBlock(id="b", name="Bash")],
        )
    )
    builder.feed(
        ToolResultBatch(
            results=[
                ToolResult(tool_use_id="b", content="B", is_error=True),
                ToolResult(tool_use_id="a", content="A"),
                ToolResult(tool_use_id="zzz", content="unknown tool"),
            ]
        )
    )
    assert builder.reply.parts == (
        ToolPart("a", "Read", {}, "A", False),
        ToolPart("b", "Bash", {}, "B", True),
    )


def test_subagent_output_is_not_part_of_the_reply() -> None:
    builder = ReplyBuilder()
    builder.feed(AssistantBlock(message_id="m", blocks=[TextBlock(text="Main.")]))
    builder.feed(MessageStart(message_id="sub", parent_tool_use_id="toolu_1"))
    builder.feed(BlockDelta(index=0, kind="text", text="sub text", parent_tool_use_id="toolu_1"))
    builder.feed(
        AssistantBlock(message_id="sub", blocks=[TextBlock(text="Sub.")], parent_tool_use_id="t")
    )
    assert text_parts(builder.reply) == ["Main."]


def test_empty_text_blocks_and_synthetic_lines_add_nothing() -> None:
    builder = ReplyBuilder()
    builder.feed(AssistantBlock(message_id="m", blocks=[TextBlock(text="")]))
    builder.feed(
        AssistantBlock(message_id="u", model="<synthetic>", blocks=[TextBlock(text="No response")])
    )
    assert builder.reply.parts == ()
    assert builder.reply.error is None


def test_thinking_preview_then_commit() -> None:
    builder = ReplyBuilder()
    builder.feed(MessageStart(message_id="m"))
    builder.feed(BlockStart(index=0, block_type="thinking"))
    builder.feed(BlockDelta(index=0, kind="thinking", text="hmm"))
    builder.feed(BlockDelta(index=0, kind="signature", text="sig"))
    assert builder.reply.thinking == (ThinkingPart("hmm", False, False),)
    builder.feed(AssistantBlock(message_id="m", blocks=[ThinkingBlock(thinking="hmm!")]))
    assert builder.reply.thinking == (ThinkingPart("hmm!", False, True),)
    assert builder.reply.output_chars == 4


# --- pure failure texts ---------------------------------------------------------------------


def result(**fields: Any) -> Result:
    return Result(subtype=fields.pop("subtype", "success"), is_error=True, **fields)


@pytest.mark.parametrize(
    ("res", "interrupted", "want"),
    [
        (result(result="API Error: boom"), False, "API Error: boom"),
        (result(subtype="error_max_turns", errors=["Reached maximum"]), False, "Reached maximum"),
        (result(errors=["a", "b"]), False, "a\nb"),
        (result(subtype="error_during_execution", errors=["[ede_diagnostic] x"]), True, None),
        (
            result(subtype="error_during_execution", errors=["[ede_diagnostic] x"]),
            False,
            "Claude Code reported error_during_execution",
        ),
        (
            result(subtype="error_max_budget_usd"),
            False,
            "Claude Code reported error_max_budget_usd",
        ),
    ],
)
def test_result_failure(res: Result, interrupted: bool, want: str | None) -> None:
    assert result_failure(res, interrupted=interrupted) == want


@dataclass(frozen=True)
class Exit:
    code: int | None
    stderr: str
    want: str | None


@pytest.mark.parametrize(
    "case",
    [
        Exit(None, "Error: x", None),
        Exit(0, "", None),
        Exit(0, "Warning: no stdin data received in 3s", None),
        Exit(143, "", None),
        Exit(-15, "", None),
        Exit(-9, "", None),
        Exit(
            1,
            "  Error: Session ID 1 is already in use.\n",
            "Error: Session ID 1 is already in use.",
        ),
        Exit(1, "", "claude exited with code 1 without a result"),
        Exit(127, "sh: claude: not found", "sh: claude: not found"),
    ],
)
def test_exit_failure(case: Exit) -> None:
    assert exit_failure(case.code, case.stderr) == case.want


def test_exit_failure_keeps_the_tail_of_a_long_stderr() -> None:
    message = exit_failure(1, "noise\n" * 1000 + "Error: the real cause")
    assert message is not None and message.endswith("Error: the real cause")
    assert len(message) <= 2000
