"""The click layer: commands, help, exit codes and messages."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentdoc.cli import cli, main
from agentdoc.document import parser as document
from tests.support.fake_claude import FakeClaude, install_as_claude


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def run_prompted(
    runner: CliRunner,
    tmp_path: Path,
    fake_claude: Callable[..., FakeClaude],
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., tuple[Path, Result]]:
    """`agentdoc run` on a new document with a pending prompt, the fake CLI made of the arguments
    in the environment."""

    def run(*args: object, **kwargs: object) -> tuple[Path, Result]:
        install_as_claude(fake_claude(*args, **kwargs), monkeypatch)
        path = tmp_path / "chat.md"
        runner.invoke(cli, ["new", str(path)], catch_exceptions=False)
        path.write_text(path.read_text() + "hi there\n")
        return path, runner.invoke(cli, ["run", str(path)], catch_exceptions=False)

    return run


@pytest.mark.parametrize("command", ["new", "start", "resume", "run", "demo"])
def test_every_command_has_help(runner: CliRunner, command: str) -> None:
    result = runner.invoke(cli, [command, "--help"], catch_exceptions=False)
    assert result.exit_code == 0 and "Usage:" in result.output


def test_new_scaffolds_a_session_document_and_refuses_to_overwrite(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "rust-lifetimes.md"
    result = runner.invoke(cli, ["new", str(path), "--model", "sonnet"], catch_exceptions=False)
    assert result.exit_code == 0
    doc = document.parse(path.read_text())
    assert doc.meta.model == "sonnet"
    assert "# rust lifetimes" in doc.text
    assert [t.role for t in doc.turns] == ["user"]
    again = runner.invoke(cli, ["new", str(path)], catch_exceptions=False)
    assert again.exit_code == 1 and "already exists" in again.output


def test_run_streams_a_reply_and_exits_zero(
    runner: CliRunner, run_prompted: Callable[..., tuple[Path, Result]]
) -> None:
    path, result = run_prompted("plain_text.ndjson")
    assert result.exit_code == 0, result.output
    assert "turn 1: done" in result.output
    assert [t.role for t in document.parse(path.read_text()).turns] == ["user", "assistant", "user"]
    # A second run with nothing new to send is a clear user error.
    again = runner.invoke(cli, ["run", str(path)], catch_exceptions=False)
    assert again.exit_code == 1 and "nothing to send" in again.output


def test_failed_turn_exits_2_with_the_error(
    run_prompted: Callable[..., tuple[Path, Result]],
) -> None:
    _, result = run_prompted("api_500.ndjson", exit="1")
    assert result.exit_code == 2
    assert "API Error: 500" in result.output


def test_resume_without_a_session_says_what_to_do(runner: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    runner.invoke(cli, ["new", str(path)], catch_exceptions=False)
    path.write_text(path.read_text() + "hi\n")
    result = runner.invoke(cli, ["resume", str(path)], catch_exceptions=False)
    assert result.exit_code == 1 and "agentdoc start" in result.output


def test_missing_claude_exit_code_and_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AGENTDOC_CLAUDE", str(tmp_path / "nope"))
    path = tmp_path / "chat.md"
    assert main(["new", str(path)]) == 0
    path.write_text(path.read_text() + "hi\n")
    before = path.read_bytes()
    # Nothing was sent: a problem to fix (exit 1), the document as it was, and one message.
    for _ in range(2):  # again: still the same advice, never "nothing to send"
        assert main(["run", str(path)]) == 1
        captured = capsys.readouterr()
        assert path.read_bytes() == before
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "cannot find the Claude Code CLI" in lines[0], captured.err
        assert "AGENTDOC_CLAUDE" in lines[0]


def test_not_a_session_document(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.md"
    path.write_text("# just notes\n")
    assert main(["run", str(path)]) == 1
    assert "plain.md" in capsys.readouterr().err
    assert path.read_text() == "# just notes\n"
