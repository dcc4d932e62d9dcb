"""Command-line mistakes a new user makes: one clear message each, and exit code 1."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentdoc.cli import main
from agentdoc.errors import EXIT_USER_ERROR

SESSION = "---\nagentdoc: {}\n---\n\n## User\n\nhi\n"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "frist.md"], "frist.md: no such file"),
        (["status", "nosuch.md"], "nosuch.md: no such file"),
        (["resume", "chat.md", "--session", "../nonsense"], "is not a session id"),
        (["resume", "chat.md", "--session", "a/b"], "is not a session id"),
        (["resume", "chat.md", "--session", "--help"], "is not a session id"),
        (["bogus"], "No such command 'bogus'"),
        (["run", "--bogus", "chat.md"], "No such option '--bogus'"),
        (["run"], "Missing argument 'PATH'"),
    ],
)
def test_mistakes_exit_1_with_a_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    # Exit 2 means "the turn ran and failed" (README); click's usage errors must not reuse it.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "chat.md").write_text(SESSION)
    assert main(argv) == EXIT_USER_ERROR
    assert message in capsys.readouterr().err
    assert (tmp_path / "chat.md").read_text() == SESSION


def test_new_creates_missing_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new", os.path.join("notes", "x.md")]) == 0
    assert "agentdoc:" in (tmp_path / "notes" / "x.md").read_text()
