"""How full the context window is: the footer's gauge and hint, and the status file."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document.render import context_gauge
from agentdoc.records.status import StatusReporter, read_status
from tests.support.paths import TRANSCRIPTS


@pytest.mark.parametrize(
    ("used", "size", "hint_at", "shown"),
    [
        (None, 200_000, 0.8, None),
        (45_000, None, 0.8, None),
        (45_000, 200_000, 0.8, "45k/200k context"),
        (159_999, 200_000, 0.8, "160k/200k context"),
        (170_000, 200_000, 1.0, "170k/200k context"),
        (45_500, 1_000_000, 0.8, "45.5k/1M context"),
        (999_960, 1_000_000, 1.0, "1M/1M context"),
    ],
)
def test_the_gauge(used: int | None, size: int | None, hint_at: float, shown: str | None) -> None:
    assert context_gauge(used, size, "long.md", hint_at) == shown


def test_past_the_threshold_one_line_says_what_to_do() -> None:
    shown = context_gauge(170_000, 200_000, "long.md", 0.8)
    assert shown is not None and "\n" not in shown
    assert shown.startswith("170k/200k context (85%): nearly full")
    assert "summary" in shown and "agentdoc archive long.md" in shown


def test_the_status_file_keeps_the_last_figures(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    reporter = StatusReporter(doc)
    reporter.report(1, "done", 100, None, "", 30, context=(45_000, 200_000))
    reporter.report(2, "starting", 0, None, "")
    status = read_status(doc)
    assert status is not None
    assert (status.context_used, status.context_size) == (45_000, 200_000)
    assert "context 45,000/200,000 tokens (22%)" in status.describe()
    reporter.report(2, "done", 100, None, "", 30, context=(52_000, 200_000))
    status = read_status(doc)
    assert status is not None and status.context_used == 52_000


def test_claude_reports_the_last_calls_prompt_and_answer_against_the_window() -> None:
    """Recorded: two API calls (a tool use, then the answer) in one turn of Claude Code."""
    import json

    from agentdoc.agents.base.events import TurnEnd
    from agentdoc.agents.claude.stream import parse_line
    from agentdoc.agents.claude.translate import Translator

    lines = (TRANSCRIPTS / "tool_use_denied.ndjson").read_bytes()
    translator = Translator()
    ends = [
        event
        for line in lines.splitlines()
        if line.strip() and (parsed := parse_line(line)) is not None
        for event in translator.feed(parsed)
        if isinstance(event, TurnEnd)
    ]
    [end] = ends
    assert end.usage is not None
    # The turn's usage adds up both calls (1667 + 1788 in); the context is the last call's.
    assert end.usage.input_tokens == 3455
    assert (end.usage.context_used, end.usage.context_size) == (1788 + 6, 1_000_000)
    assert json.loads(lines.splitlines()[-1])["type"] == "result"


def test_the_footer_carries_the_gauge() -> None:
    from agentdoc.agents.base.events import Usage
    from agentdoc.agents.base.reply import Reply
    from agentdoc.document.render import render_footer

    reply = Reply(usage=Usage(1200, 350, 0.01, context_used=170_000, context_size=200_000))
    quiet = render_footer(reply, 1.0, None, document_name="long.md", context_hint=0.9)
    assert "170k/200k context</sub>" in quiet
    loud = render_footer(reply, 1.0, None, document_name="long.md", context_hint=0.8)
    assert "(85%): nearly full" in loud and "\n" not in loud
