"""Small first-hour hints, as the user meets them (the replaying fake CLI is enough here)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from agentdoc.agents import Reply
from agentdoc.agents.base.events import Usage
from agentdoc.cli import main
from agentdoc.document import parser as document
from agentdoc.document.render import render_footer
from agentdoc.records import status
from agentdoc.turn.detect import heading_hint
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude

HEAD = "---\nagentdoc: {}\n---\n\n"


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        ("## user\n\nhi\n", "`## user` is not a turn heading"),
        ("# User\n\nhi\n", "`# User` is not a turn heading"),
        ("### USER\n\nhi\n", "`### USER` is not a turn heading"),
        ("## User\n\n", ""),
        ("## User\n\nhi\n\n## Assistant\n\nhello\n", ""),
    ],
)
def test_nothing_to_send_says_when_the_heading_is_near_miss(body: str, hint: str) -> None:
    found = heading_hint(document.parse(HEAD + body))
    assert (hint in found) if hint else found == ""


def test_run_with_a_near_miss_heading_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(HEAD + "## user\n\nWhat is a borrow?\n")
    assert main(["run", str(path)]) == 1
    err = capsys.readouterr().err
    assert "nothing to send" in err and "must be exactly `## User`" in err


def test_a_typo_under_agentdoc_is_named_with_the_known_keys(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, plain_claude: FakeClaude
) -> None:
    path = tmp_path / "chat.md"
    path.write_text("---\nagentdoc:\n  sesion: abc\n---\n\n## User\n\nhi\n")
    with caplog.at_level(logging.WARNING):
        TurnRunner(path, plain_claude.settings(), clear=own_leave, environ=plain_claude.env).run()
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "unknown key under `agentdoc:`: sesion" in warned
    assert "session, model" in warned


def test_the_status_reports_the_clis_own_token_count_at_the_end(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(HEAD + "## User\n\nhi\n")
    outcome = TurnRunner(
        path, plain_claude.settings(), clear=own_leave, environ=plain_claude.env
    ).run()
    shown = status.read_status(path)
    assert outcome.reply.usage is not None and shown is not None
    assert shown.tokens == outcome.reply.usage.output_tokens
    assert shown.tokens_estimated is False


def test_a_footer_leaves_out_figures_the_cli_did_not_report() -> None:
    failed = Reply(usage=Usage(input_tokens=0, output_tokens=0), stop_reason="error")
    assert " in / " not in render_footer(failed, 1.5, None)


def test_a_footer_says_a_cost_agentdoc_estimated() -> None:
    usage = Usage(input_tokens=4000, output_tokens=9, cost_usd=0.0123)
    said = render_footer(Reply(usage=usage), 1.5, None)
    guessed = render_footer(Reply(usage=replace(usage, cost_estimated=True)), 1.5, None)
    assert "· $0.012 ·" in said and "· ~$0.012 ·" in guessed
