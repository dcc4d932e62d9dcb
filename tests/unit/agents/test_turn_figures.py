"""A turn's own figures: cost out of a warm CLI's running totals, one model name, and a
sidecar that says when the API sent thinking without its text."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from agentdoc.agents import ReplyBuilder, ThinkingPart
from agentdoc.agents.base.events import BlockEnd, BlockStart, MessageStart, TurnEnd
from agentdoc.agents.claude.events import Result
from agentdoc.agents.claude.framing import iter_lines
from agentdoc.agents.claude.stream import parse_line
from agentdoc.agents.claude.translate import Translator
from agentdoc.agents.claude.usage import cost_share, model_name, only_this_turn, turn_cost
from agentdoc.document.thinking import OMITTED, render_section
from tests.support.paths import TRANSCRIPTS


@pytest.mark.parametrize(
    ("reported", "before", "own", "remembered"),
    [
        (0.009, 0.0, 0.009, 0.009),  # the first turn of a process: the total is its own
        (0.018, 0.009, 0.009, 0.018),  # the next turn: the difference
        (0.035559999999999994, 0.017696, 0.017864, 0.035559999999999994),  # float noise
        (0.0, 0.018, 0.0, 0.018),  # a failed turn reports zeros: the total stays
        (None, 0.018, None, 0.018),  # no figure at all
        (0.004, 0.018, 0.004, 0.004),  # smaller than before: the count started again
    ],
)
def test_turn_cost(
    reported: float | None, before: float, own: float | None, remembered: float
) -> None:
    assert turn_cost(reported, before) == (own, remembered)


def test_a_cost_of_the_turn_alone_adds_to_the_total_before() -> None:
    assert turn_cost(0.016, 0.017, own_only=True) == (0.016, 0.033)
    assert turn_cost(0.0, 0.017, own_only=True) == (0.0, 0.017)  # a failed turn


@pytest.mark.parametrize(
    ("turn", "models", "alone"),
    [
        (3243, [3243], True),  # the model counted this turn's tokens only
        (3243, [3243, 120], True),  # a helper model beside it
        (4457, [8887], False),  # the model's count runs over earlier turns
        (0, [0], False),  # no figures: no evidence
        (3243, [], False),  # no modelUsage
    ],
)
def test_only_this_turn(turn: int, models: list[int], alone: bool) -> None:
    assert only_this_turn(turn, models) is alone


def one_shot_result(
    usage_input: int, model_input: int, cost: float, model_output: int = 1
) -> bytes:
    """A one-shot run's `result` line: the turn's `usage`, the run's `modelUsage` and cost."""
    return json.dumps(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": "s",
            "total_cost_usd": cost,
            "usage": {"input_tokens": usage_input, "output_tokens": 1},
            "modelUsage": {
                "claude-opus-4-8": {
                    "inputTokens": model_input,
                    "outputTokens": model_output,
                    "costUSD": cost,
                }
            },
        }
    ).encode()


@pytest.mark.parametrize(
    ("model_input", "model_output", "cost", "own", "total"),
    [
        # Claude Code 2.1.197: a resumed one-shot run counts its own turn only.
        (3242, 1, 0.016235, 0.016235, 0.032320),
        # Claude Code 2.1.330: it counts the session's earlier turns too.
        (3212 + 3242, 2, 0.03232, 0.016235, 0.03232),
    ],
)
def test_a_resumed_one_shot_turn_costs_its_own_whichever_release(
    model_input: int, model_output: int, cost: float, own: float, total: float
) -> None:
    result = parse_line(one_shot_result(3242, model_input, cost, model_output))
    assert isinstance(result, Result)
    translator = Translator(cost_before=0.016085)
    [end] = translator.feed(result)
    assert isinstance(end, TurnEnd) and end.usage is not None
    assert end.usage.cost_usd == own
    assert end.usage.session_cost_usd == translator.reported_total == total


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("claude-opus-4-8[1m]", "claude-opus-4-8"),
        ("claude-opus-4-8", "claude-opus-4-8"),
        ("claude-sonnet-4-5[200k]", "claude-sonnet-4-5"),
        ("[1m]", "[1m]"),  # nothing but a tag: keep what we were told
        (None, None),
        ("", ""),
    ],
)
def test_model_name_drops_the_context_window_tag(name: str | None, shown: str | None) -> None:
    assert model_name(name) == shown


def result_lines() -> list[bytes]:
    """The two `result` lines of the recorded two-turn warm CLI (running totals)."""
    data = (TRANSCRIPTS / "input_stream_json.ndjson").read_bytes()
    return [line for line in iter_lines([data]) if b'"type":"result"' in line]


def test_warm_results_become_each_turns_own_cost() -> None:
    first, second = result_lines()
    assert json.loads(second)["total_cost_usd"] > 1.9 * json.loads(first)["total_cost_usd"]
    total = 0.0
    costs: list[float | None] = []
    for line in (first, second):
        result = parse_line(line)
        assert isinstance(result, Result)
        translator = Translator(cost_before=total)
        [end] = translator.feed(result)
        assert isinstance(end, TurnEnd) and end.usage is not None
        costs.append(end.usage.cost_usd)
        assert end.usage.session_cost_usd == result.total_cost_usd
        assert translator.reported_total is not None
        total = translator.reported_total
    assert costs == [0.008555, round(0.01734 - 0.008555, 9)]
    assert total == 0.01734


def test_a_resumed_sessions_earlier_cost_is_not_the_turns() -> None:
    """A one-shot CLI resuming a session reports its whole cost so far; the turn's own is its
    share by tokens, right even where our record of the session's total before it is not."""
    _, second = result_lines()
    result = parse_line(second)
    assert isinstance(result, Result)
    [end] = Translator(cost_before=0.01).feed(result)
    assert isinstance(end, TurnEnd) and end.usage is not None
    assert end.usage.cost_usd == round(0.01734 - 0.008555, 9)


def test_one_model_name_whichever_line_tells_it() -> None:
    data = (TRANSCRIPTS / "input_stream_json.ndjson").read_bytes()
    lines = list(iter_lines([data]))
    turns: list[list[bytes]] = [[]]
    for line in lines:
        turns[-1].append(line)
        if b'"type":"result"' in line:
            turns.append([])
    models = set()
    for turn in turns[:2]:
        for skip_init in (False, True):  # a turn whose `init` was not seen names it the same
            translator, builder = Translator(), ReplyBuilder()
            for line in turn:
                event = parse_line(line)
                if event is not None and not (skip_init and event.type == "init"):
                    for neutral in translator.feed(event):
                        builder.feed(neutral)
            models.add(builder.reply.model)
    assert models == {"claude-opus-4-8"}


STARTED = datetime(2026, 11, 23, 20, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("parts", "omitted"),
    [
        ((ThinkingPart("", redacted=False, committed=True),), 1),
        ((ThinkingPart("  \n", redacted=False, committed=True),), 1),
        (
            (
                ThinkingPart("", redacted=False, committed=True),
                ThinkingPart("", redacted=False, committed=True),
            ),
            1,  # one note for a run of empty blocks
        ),
        ((ThinkingPart("Plan: answer.", redacted=False, committed=True),), 0),
        ((ThinkingPart("", redacted=True, committed=True),), 0),  # said as redacted instead
        ((ThinkingPart("", redacted=False, committed=False),), 0),  # still streaming
    ],
)
def test_signature_only_thinking_is_said_to_be_omitted(
    parts: tuple[ThinkingPart, ...], omitted: int
) -> None:
    section = render_section(1, STARTED, "s1", parts)
    assert section.count(OMITTED) == omitted
    assert section.startswith('<a id="turn-1"></a>\n## Turn 1')


def test_an_ended_thinking_block_without_text_is_kept_to_be_told() -> None:
    builder = ReplyBuilder()
    for event in (MessageStart("m1"), BlockStart(0, "thinking"), BlockEnd(0, "")):
        builder.feed(event)
    assert builder.reply.thinking == (ThinkingPart("", redacted=False, committed=True),)
    streaming = ReplyBuilder()
    for event in (MessageStart("m1"), BlockStart(0, "thinking")):
        streaming.feed(event)
    assert streaming.reply.thinking == ()  # not ended yet: nothing to say


def test_a_fresh_process_costs_its_share_whatever_total_it_started_from() -> None:
    # Claude Code 2.1.332's warm fork after `undo` counts the whole session file, the turn
    # taken back included, while our record knows only the turn kept (0.017744).
    result = parse_line(one_shot_result(4460, 13350, 0.05348, model_output=4))
    assert isinstance(result, Result)
    translator = Translator(cost_before=0.017744)
    [end] = translator.feed(result)
    assert isinstance(end, TurnEnd) and end.usage is not None
    assert end.usage.cost_usd == pytest.approx(4460 * 4e-6 + 20e-6, abs=1e-6)


def test_a_process_that_counted_is_its_own_baseline() -> None:
    # A cancelled turn's result (no tokens of its own) moved the warm CLI's total; the next
    # turn costs the difference from that, not from our record of the session.
    result = parse_line(one_shot_result(4546, 22385, 0.09008, model_output=27))
    assert isinstance(result, Result)
    translator = Translator(cost_before=0.071836, counted=True)
    [end] = translator.feed(result)
    assert isinstance(end, TurnEnd) and end.usage is not None
    assert end.usage.cost_usd == pytest.approx(0.018244)


@pytest.mark.parametrize(
    ("own", "models", "share"),
    [
        (100.0, [(400.0, 0.04)], 0.01),
        (0.0, [(400.0, 0.04)], None),  # a cancelled turn: no tokens of its own reported
        (100.0, [(400.0, 0.04), (50.0, 0.001)], None),  # which model spent them is not told
        (500.0, [(400.0, 0.04)], None),  # the model counted fewer: not a running total
    ],
)
def test_cost_share(own: float, models: list[tuple[float, float]], share: float | None) -> None:
    assert cost_share(own, models) == share
