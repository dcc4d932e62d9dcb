"""The Claude CLI seen through the neutral face: stream-json lines → neutral events, answers →
control responses, a process's end → the turn's end (pure: the CLI is a list of lines)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import (
    Activity,
    AgentRequest,
    EndOfStream,
    Event,
    PermissionAsked,
    PermissionWithdrawn,
    Retrying,
    start_turn,
)
from agentdoc.agents.base.events import TurnEnd, Usage
from agentdoc.agents.claude.stream import parse_line
from agentdoc.agents.claude.translate import Translator
from agentdoc.agents.claude.turn import ClaudeTurn
from agentdoc.agents.claude.usage import Prices
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError
from tests.support.clearance import leave_for


class Lines:
    """A CLI turn that prints `lines` and exits with `code`."""

    def __init__(self, lines: list[dict[str, Any] | bytes], code: int = 0, stderr: str = ""):
        self.lines = [x if isinstance(x, bytes) else json.dumps(x).encode() for x in lines]
        self.code, self._stderr = code, stderr
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.finished_with: float | None = None

    pid = 4242

    @property
    def stderr(self) -> str:
        return self._stderr

    def next_line(self, timeout: float) -> bytes | None:
        return self.lines.pop(0) if self.lines else b""

    def stop(self, grace: float = 2.0) -> None:
        pass

    def wait(self, timeout: float | None = None) -> int:
        return self.code

    def finish(self, grace: float) -> int:
        self.finished_with = grace
        return self.code

    def respond(self, request_id: str, answer: Mapping[str, Any]) -> bool:
        self.sent.append((request_id, dict(answer)))
        return True


def events_of(turn: ClaudeTurn) -> list[Event]:
    out: list[Event] = []
    while not isinstance(event := turn.next_event(1), EndOfStream):
        assert event is not None
        out.append(event)
    return out


def stream(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "stream_event", "event": event}


def result(**fields: Any) -> dict[str, Any]:
    return {"type": "result", "subtype": "success", "is_error": False, **fields}


def ending(*lines: dict[str, Any]) -> TurnEnd:
    translator = Translator()
    out = [e for line in lines for e in translator.feed(parse_line(json.dumps(line)))]  # type: ignore[arg-type]
    assert isinstance(out[-1], TurnEnd)
    return out[-1]


@pytest.mark.parametrize(
    ("stop", "want"),
    [
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        (None, "end_turn"),
    ],
)
def test_the_message_stop_reason_becomes_the_turns(stop: str | None, want: str) -> None:
    delta = stream({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {}})
    assert ending(delta, result()).stop_reason == want


def test_usage_counts_every_prompt_token_and_the_cost() -> None:
    usage = {
        "input_tokens": 5,
        "cache_creation_input_tokens": 100,
        "cache_read_input_tokens": 1000,
        "output_tokens": 7,
    }
    end = ending(result(usage=usage, total_cost_usd=0.25, session_id="s", modelUsage={"opus": {}}))
    assert end.usage == Usage(
        input_tokens=1105, output_tokens=7, cost_usd=0.25, session_cost_usd=0.25
    )
    assert (end.session_id, end.model) == ("s", "opus")


@pytest.mark.parametrize(
    ("fields", "stop", "error", "interrupted"),
    [
        ({"is_error": True, "result": "API Error: 500"}, "error", "API Error: 500", False),
        (
            {
                "is_error": True,
                "subtype": "error_during_execution",
                "terminal_reason": "aborted_streaming",
                "errors": ["[ede_diagnostic] x"],
            },
            "cancelled",
            None,
            True,
        ),
    ],
)
def test_errors_and_aborts_end_the_turn_in_the_neutral_words(
    fields: dict[str, Any], stop: str, error: str | None, interrupted: bool
) -> None:
    end = ending(result(**fields))
    assert (end.stop_reason, end.error, end.interrupted) == (stop, error, interrupted)


def test_an_api_retry_is_a_retrying_notice() -> None:
    line = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 2,
        "max_retries": 4,
        "retry_delay_ms": 1500,
        "error_status": 529,
        "error": "overloaded",
    }
    turn = ClaudeTurn(Lines([line]))
    assert events_of(turn) == [Retrying(2, 4, 1500, 529, "overloaded")]


def permission_request(request_id: str = "r1") -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {
            "subtype": "can_use_tool",
            "tool_name": "Write",
            "input": {"file_path": "/w/a.txt"},
            "tool_use_id": "toolu_1",
        },
    }


def test_a_permission_request_offers_three_options_and_a_cancel_withdraws_it() -> None:
    cancel = {"type": "control_cancel_request", "request_id": "r1"}
    asked, withdrawn = events_of(ClaudeTurn(Lines([permission_request(), cancel])))
    assert isinstance(asked, PermissionAsked)
    assert (asked.request_id, asked.tool_name, asked.tool_id) == ("r1", "Write", "toolu_1")
    assert [o.kind for o in asked.options] == ["allow_once", "allow_always", "reject_once"]
    assert withdrawn == PermissionWithdrawn("r1")


@pytest.mark.parametrize(
    ("kind", "message", "want"),
    [
        ("allow_once", None, {"behavior": "allow", "updatedInput": {"file_path": "/w/a.txt"}}),
        ("reject_once", "not there", {"behavior": "deny", "message": "not there"}),
        ("reject_once", None, {"behavior": "deny", "message": "The user denied this."}),
    ],
)
def test_an_answer_is_the_clis_control_response(
    kind: str, message: str | None, want: dict[str, Any]
) -> None:
    lines = Lines([permission_request()])
    turn = ClaudeTurn(lines)
    (asked,) = events_of(turn)
    assert isinstance(asked, PermissionAsked)
    option = next(o.option_id for o in asked.options if o.kind == kind)
    assert turn.answer("r1", option, message)
    assert lines.sent == [("r1", want)]
    assert not turn.answer("r1", option)  # answered once; the CLI no longer waits


def test_always_allow_adds_a_session_rule() -> None:
    lines = Lines([permission_request()])
    turn = ClaudeTurn(lines)
    events_of(turn)
    turn.answer("r1", "allow_always")
    [(_, sent)] = lines.sent
    assert sent["updatedPermissions"][0]["rules"] == [{"toolName": "Write"}]


def test_lines_that_show_nothing_still_count_as_activity() -> None:
    turn = ClaudeTurn(Lines([b"{corrupt", stream({"type": "content_block_stop", "index": 0})]))
    assert events_of(turn) == [Activity(), Activity()]


def test_a_turn_with_a_result_needs_no_end_from_close() -> None:
    lines = Lines([result()])
    turn = ClaudeTurn(lines)
    (end,) = events_of(turn)
    assert isinstance(end, TurnEnd)
    assert turn.close(5.0) is None and lines.finished_with == 5.0


@pytest.mark.parametrize(
    ("code", "stderr", "error"),
    [
        (143, "", None),
        (1, "Error: Session ID 1 is already in use.\n", "Error: Session ID 1 is already in use."),
    ],
)
def test_a_process_that_ends_without_a_result_ends_the_turn_from_close(
    code: int, stderr: str, error: str | None
) -> None:
    turn = ClaudeTurn(Lines([], code, stderr))
    assert events_of(turn) == []
    end = turn.close(5.0)
    assert end is not None and end.interrupted and end.error == error


class Late(Lines):
    """A stopped CLI's last lines, which its reader passes on only to a wait."""

    def next_line(self, timeout: float) -> bytes | None:
        return super().next_line(timeout) if timeout > 0 else None


def test_a_cancelled_turns_result_read_late_still_ends_it_with_its_cost() -> None:
    aborted = result(
        is_error=True,
        subtype="error_during_execution",
        terminal_reason="aborted_streaming",
        usage={"input_tokens": 5, "output_tokens": 3},
        total_cost_usd=0.02,
    )
    turn = ClaudeTurn(Late([aborted]))
    assert turn.next_event(0) is None  # what a drain after the stop finds at once
    end = turn.close(5.0)
    assert end is not None and end.stop_reason == "cancelled"
    assert end.usage is not None and end.usage.cost_usd == 0.02


def started(message_id: str, cache_read: int, fresh: int = 0) -> dict[str, Any]:
    usage = {"input_tokens": fresh, "cache_read_input_tokens": cache_read, "output_tokens": 1}
    message = {"id": message_id, "model": "claude-opus-4-8", "usage": usage}
    return stream({"type": "message_start", "message": message})


def text(words: str) -> dict[str, Any]:
    delta = {"type": "text_delta", "text": words}
    return stream({"type": "content_block_delta", "index": 0, "delta": delta})


def test_a_turn_the_cli_ends_without_a_result_costs_its_streamed_tokens() -> None:
    """A SIGINT can win the race with the CLI's result (or a kill leaves none): the turn is
    then estimated from what its stream showed, at the price the process's last result taught
    for that model, and its cost kept — never zero."""
    prices = Prices()
    answered = result(
        session_id="s",
        total_cost_usd=0.0105,
        usage={"input_tokens": 10, "cache_read_input_tokens": 1000, "output_tokens": 20},
        modelUsage={
            "claude-opus-4-8[1m]": {
                "inputTokens": 10,
                "cacheReadInputTokens": 1000,
                "outputTokens": 20,
                "costUSD": 0.0105,  # 210 input-token equivalents at $0.00005
            }
        },
    )
    assert events_of(ClaudeTurn(Lines([started("m1", 1000, 10), answered]), prices=prices))
    # The next turn: a tool call's answer came whole (its count), then its second call was
    # cut off after 40 characters of text, before the API counted them.
    delta = stream({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 8}})
    cut: list[dict[str, Any] | bytes] = [started("m2", 1200), delta, started("m3", 1300)]
    cut.append(text("x" * 40))
    turn = ClaudeTurn(Lines(cut), prices=prices)
    events_of(turn)
    end = turn.close(1.0)
    assert end is not None and end.interrupted and end.error is None
    assert end.usage is not None and end.usage.cost_estimated
    # 1200 + 1300 cached prompt tokens at a tenth, 8 + 10 answer tokens at five times.
    assert end.usage.cost_usd == pytest.approx((0.1 * 2500 + 5 * 18) * 0.00005)
    assert (end.usage.input_tokens, end.usage.output_tokens) == (2500, 18)
    assert end.model == "claude-opus-4-8"
    # A process that never read a result for the model: its tokens, and no cost made up.
    unpriced = ClaudeTurn(Lines(cut))
    events_of(unpriced)
    end = unpriced.close(1.0)
    assert end is not None and end.usage is not None
    assert end.usage.cost_usd is None and not end.usage.cost_estimated


def test_an_agent_the_launcher_does_not_know_is_refused(tmp_path: Path) -> None:
    request = AgentRequest("hi", tmp_path, agent="nonesuch", clearance=leave_for(tmp_path))
    with pytest.raises(
        AgentdocError, match=r"'nonesuch' is not an agent's name; known agents: claude"
    ):
        start_turn(request, Settings())
