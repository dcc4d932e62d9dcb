"""The agent-neutral reply builder: its rules over hand-made event sequences (pure, no agent)."""

from __future__ import annotations

import pytest

from agentdoc.agents import (
    Event,
    PermissionAsked,
    Reply,
    ReplyBuilder,
    Retrying,
    TextPart,
    ThinkingPart,
    ToolPart,
)
from agentdoc.agents.base.events import (
    BlockDelta,
    BlockEnd,
    BlockStart,
    MessageStart,
    MessageStop,
    Notice,
    Retract,
    SessionStarted,
    ToolCall,
    ToolUpdate,
    TurnEnd,
    Usage,
)
from agentdoc.document.render import render_final


def fed(*events: Event) -> Reply:
    builder = ReplyBuilder()
    for event in events:
        builder.feed(event)
    return builder.reply


def texts(reply: Reply) -> list[tuple[str, bool]]:
    return [(p.text, p.committed) for p in reply.parts if isinstance(p, TextPart)]


def streamed(message: str, *chunks: str, index: int = 0, end: str | None = "") -> list[Event]:
    """A message with one text block streamed as ``chunks``; ``end``: "" ends it as streamed,
    a text ends it with that correction, None leaves it open."""
    out: list[Event] = [MessageStart(message), BlockStart(index, "text")]
    out += [BlockDelta(index, chunk) for chunk in chunks]
    if end is not None:
        out.append(BlockEnd(index, end or None))
    return out


@pytest.mark.parametrize(
    ("events", "want"),
    [
        # deltas append to their block; an end without text keeps what they built
        (streamed("m", "Hel", "lo"), [("Hello", True)]),
        # an open block is shown, tentatively
        (streamed("m", "Hel", end=None), [("Hel", False)]),
        # the end's text replaces the preview (a correction)
        (streamed("m", "Helo", end="Hello"), [("Hello", True)]),
        # a delta with no start opens a text block
        ([MessageStart("m"), BlockDelta(0, "x")], [("x", False)]),
        # an empty text block adds nothing
        ([MessageStart("m"), BlockStart(0, "text"), BlockEnd(0)], []),
        # a new message resets the indexes: its block 0 is a new block after the first
        (streamed("m1", "One. ") + streamed("m2", "Two."), [("One. ", True), ("Two.", True)]),
        # a message's retraction takes back its blocks, ended or not, and only its own
        (
            [
                *streamed("m1", "Kept. "),
                *streamed("m2", "Gone. "),
                BlockStart(1, "text"),
                BlockDelta(1, "half"),
                Retract("m2"),
                *streamed("m3", "Again."),
            ],
            [("Kept. ", True), ("Again.", True)],
        ),
        # a retraction without a message takes back every block not yet ended
        (
            [*streamed("m", "Done. "), BlockStart(1, "text"), BlockDelta(1, "dang"), Retract()],
            [("Done. ", True)],
        ),
        # nothing after the end of the turn counts
        (
            [*streamed("m", "Final."), TurnEnd("end_turn"), *streamed("n", "late")],
            [("Final.", True)],
        ),
    ],
)
def test_text_rules(events: list[Event], want: list[tuple[str, bool]]) -> None:
    assert texts(fed(*events)) == want


def test_thinking_is_apart_and_a_redacted_block_shows_empty() -> None:
    reply = fed(
        MessageStart("m"),
        BlockStart(0, "thinking"),
        BlockDelta(0, "hmm"),
        BlockEnd(0),
        BlockStart(1, "redacted_thinking"),
        BlockEnd(1),
        *streamed("m2", "Answer."),
    )
    assert reply.thinking == (ThinkingPart("hmm", False, True), ThinkingPart("", True, True))
    assert reply.text() == "Answer."
    assert reply.output_chars == len("hmm") + len("Answer.")


def test_tool_calls_are_made_in_place_and_filled() -> None:
    reply = fed(
        *streamed("m", "Reading. "),
        ToolCall("t1", "Read", {"path": "a"}),
        ToolUpdate("t1", input={"path": "a.txt"}),
        ToolUpdate("t1", result="1 line", is_error=False),
        ToolUpdate("nope", result="ignored"),
        *streamed("m2", "Done."),
    )
    assert reply.parts == (
        TextPart("Reading. ", True),
        ToolPart("t1", "Read", {"path": "a.txt"}, "1 line", False),
        TextPart("Done.", True),
    )


def test_a_retracted_message_takes_its_tool_calls_along() -> None:
    reply = fed(MessageStart("m"), ToolCall("t1", "Bash"), Retract("m"), ToolUpdate("t1", "x"))
    assert reply.parts == ()


def test_the_end_carries_usage_stop_reason_and_session() -> None:
    usage = Usage(input_tokens=12, output_tokens=3, cost_usd=0.01)
    builder = ReplyBuilder()
    for event in streamed("m", "Hi"):
        builder.feed(event)
    assert not builder.ended and not builder.reply.done
    builder.feed(TurnEnd("max_tokens", session_id="s", model="opus", usage=usage))
    reply = builder.reply
    assert builder.ended and reply.done
    assert (reply.stop_reason, reply.usage, reply.session_id, reply.model) == (
        "max_tokens",
        usage,
        "s",
        "opus",
    )
    assert not reply.interrupted and reply.error is None


def test_a_turn_that_never_ended_is_interrupted_and_keeps_its_open_blocks() -> None:
    builder = ReplyBuilder()
    for event in streamed("m", "Half", end=None):
        builder.feed(event)
    builder.finish()
    builder.finish()
    reply = builder.reply
    assert reply.interrupted and reply.finished and reply.stop_reason is None
    assert texts(reply) == [("Half", False)]


def test_a_notice_is_the_error_and_an_ending_error_does_not_replace_it() -> None:
    reply = fed(Notice("API Error: 529"), TurnEnd("error", error="later text"))
    assert reply.error == "API Error: 529"


def test_the_retry_notice_shows_until_content_streams() -> None:
    retry = Retrying(attempt=1, max_retries=3, delay_ms=500.0, error_status=529)
    builder = ReplyBuilder()
    builder.feed(SessionStarted("s", "opus"))
    builder.feed(retry)
    assert builder.reply.retry == retry and builder.reply.session_id == "s"
    builder.feed(MessageStart("m"))
    assert builder.reply.retry is None


def test_permission_events_leave_the_reply_alone() -> None:
    reply = fed(*streamed("m", "A"), PermissionAsked("r", "Bash"), MessageStop())
    assert texts(reply) == [("A", True)]


def test_a_snapshot_does_not_change_afterwards() -> None:
    builder = ReplyBuilder()
    builder.feed(MessageStart("m"))
    builder.feed(BlockDelta(0, "a"))
    early = builder.reply
    builder.feed(BlockDelta(0, "b"))
    assert early.text() == "a" and builder.reply.text() == "ab"


# --- how the end of a turn reads in the document --------------------------------------------


@pytest.mark.parametrize(
    ("ending", "callout"),
    [
        ({"stop_reason": "cancelled", "interrupted": True}, "the turn was cancelled."),
        ({"stop_reason": "max_tokens"}, "**The reply was cut off:**"),
        ({"stop_reason": "refusal"}, "**The model declined to answer**"),
        ({"stop_reason": "error", "interrupted": True}, "**The reply was interrupted**"),
        ({"stop_reason": "error", "error": "API Error: 500"}, "**The reply failed:** API Error"),
    ],
)
def test_each_short_ending_has_its_callout(ending: dict[str, object], callout: str) -> None:
    reply = Reply(parts=(TextPart("Some text.", True),), **ending)  # type: ignore[arg-type]
    body = render_final(
        reply, elapsed=1.0, document_name="chat.md", thinking_link=None, footer=False
    )
    assert body.startswith("Some text.")
    assert "> [!WARNING]" in body and callout in body


def test_a_whole_reply_has_no_callout_and_its_footer_shows_the_usage() -> None:
    usage = Usage(input_tokens=1500, output_tokens=20, cost_usd=0.0123)
    reply = Reply(parts=(TextPart("Done.", True),), stop_reason="end_turn", usage=usage)
    body = render_final(
        reply, elapsed=2.0, document_name="chat.md", thinking_link=None, footer=True
    )
    assert "[!WARNING]" not in body
    assert "1.5k in / 20 out · $0.012 · 2.0 s" in body
