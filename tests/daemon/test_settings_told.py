"""Settings that fail validation are told in agentdoc's words (which key, what it allows) by the
daemon, at start-up and on a save, and by `agentdoc run`; never in the validator's."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.config import load_settings
from agentdoc.errors import AgentdocError, allowed
from agentdoc.records import status
from tests.support.daemon import Running, make_daemon, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

BAD = "---\nagentdoc: {effort: extreme, thinking: nope, model: -rf}\n---\n\n## User\n\nhello\n"
TOLD = (
    "`agentdoc.effort` must be one of 'low', 'medium', 'high', 'xhigh' or 'max' (got 'extreme')",
    "`agentdoc.thinking` must be true or false (got 'nope')",
    "`agentdoc.model` must be a model name",
)


@pytest.mark.parametrize(
    ("kind", "ctx", "told"),
    [
        ("literal_error", {"expected": "'a' or 'b'"}, "must be one of 'a' or 'b'"),
        ("bool_parsing", None, "must be true or false"),
        ("int_parsing", None, "must be a whole number"),
        ("greater_than", {"gt": 0}, "must be greater than 0"),
        ("extra_forbidden", None, "is not a setting agentdoc knows"),
        ("value_error", {"error": ValueError("our words")}, "our words"),
        ("something_new", None, "is not allowed here (input should be odd)"),
    ],
)
def test_validation_errors_in_agentdocs_words(
    kind: str, ctx: dict[str, object] | None, told: str
) -> None:
    assert allowed(kind, ctx, "Input should be odd") == told


def _error_of(doc: Path) -> str:
    found = status.read_status(doc)
    return (found.error or "") if found is not None and found.state == "error" else ""


def test_the_daemon_tells_bad_settings_at_start_up_and_on_a_save(
    caplog: pytest.LogCaptureFixture, folder: Path, plain_claude: FakeClaude
) -> None:
    waiting, saved = folder / "waiting.md", folder / "saved.md"
    waiting.write_text(BAD)
    saved.write_text(BAD.replace("hello\n", ""))
    caplog.set_level(logging.ERROR)
    with Running(make_daemon(folder, plain_claude), discovered=True):
        wait_for(lambda: all(t in _error_of(waiting) for t in TOLD), "the start-up's status")
        saved.write_text(BAD)
        wait_for(lambda: all(t in _error_of(saved) for t in TOLD), "the save's status")
        # The prompt waits: the document itself says why, below it.
        wait_for(lambda: "**Not sent:**" in saved.read_text(), "the notice in the document")
        assert all(t in saved.read_text() for t in TOLD[:2])
        assert not plain_claude.calls()
        # Fixed and saved: the prompt is sent, and the reply takes the notice's place.
        saved.write_text(
            saved.read_text().replace("effort: extreme, thinking: nope, model: -rf", "")
        )
        wait_for(lambda: roles(saved) == ["user", "assistant", "user"], "the reply")
        assert "Not sent" not in saved.read_text()
    assert len(plain_claude.calls()) == 1
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert all(t in logged for t in TOLD) and "Input should be" not in logged


@pytest.mark.parametrize("send_pending", [False, True])
def test_bad_settings_found_at_start_up_are_told_with_or_without_a_prompt(
    caplog: pytest.LogCaptureFixture, send_pending: bool, folder: Path, plain_claude: FakeClaude
) -> None:
    waiting, quiet = folder / "waiting.md", folder / "quiet.md"
    waiting.write_text(BAD)
    quiet.write_text(BAD.replace("hello\n", ""))
    caplog.set_level(logging.ERROR)
    told: list[str] = []
    daemon = make_daemon(
        folder, plain_claude, send_pending=send_pending, on_progress=lambda p: told.append(p.detail)
    )
    with Running(daemon, discovered=True):
        wait_for(
            lambda: all(t in _error_of(d) for t in TOLD for d in (waiting, quiet)), "the statuses"
        )
    assert not plain_claude.calls()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for doc in (waiting, quiet):
        assert any(doc.name in m and TOLD[0] in m for m in logged.splitlines()), logged
        assert any(doc.name in e and TOLD[0] in e for e in told), told
    assert "Input should be" not in logged
    assert "Not sent" not in waiting.read_text()  # nobody saved it: the file is left alone


def test_agentdoc_run_tells_them_in_the_same_words(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(BAD)
    result = CliRunner().invoke(cli, ["run", str(doc)])
    assert result.exit_code != 0
    assert all(t in result.output for t in TOLD), result.output
    assert "Input should be" not in result.output


def test_a_bad_config_file_is_told_in_the_same_words(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('effort = "extreme"\nflush_interval = "soon"\n')
    with pytest.raises(AgentdocError) as told:
        load_settings(path=config, environ={})
    assert "`effort` must be one of" in str(told.value)
    assert "`flush_interval` must be a number" in str(told.value)
    assert "Input should be" not in str(told.value)
