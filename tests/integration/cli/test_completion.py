"""Shell completion of document paths, driven the way the shell drives it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli


def complete(words: str, monkeypatch: pytest.MonkeyPatch, folder: Path) -> list[str]:
    """What bash would offer for the last word of `words` (click's bash completion protocol)."""
    monkeypatch.chdir(folder)
    parts = words.split(" ")
    env = {
        "_AGENTDOC_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(parts) - 1),
    }
    result = CliRunner().invoke(cli, [], env=env, prog_name="agentdoc")
    assert result.exit_code == 0, result.output
    pairs = [line.split(",", 1) for line in result.output.splitlines()]
    return [value for kind, value in pairs if kind == "plain"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "rust.md").write_text("")
    (tmp_path / "notes" / "rust.thinking.md").write_text("")
    (tmp_path / "notes" / "rust.pdf").write_text("")
    (tmp_path / "notes.md").write_text("")
    (tmp_path / "nothing.txt").write_text("")
    (tmp_path / ".agentdoc").mkdir()
    return tmp_path


@pytest.mark.parametrize("command", ["run", "start", "resume", "cancel", "fork", "new"])
def test_document_arguments_complete_markdown_files_and_folders(
    tree: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    assert complete(f"agentdoc {command} no", monkeypatch, tree) == ["notes/", "notes.md"]
    assert complete(f"agentdoc {command} notes/", monkeypatch, tree) == ["notes/rust.md"]


@pytest.mark.parametrize("command", ["watch", "status", "stop"])
def test_folder_arguments_complete_too(
    tree: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    assert complete(f"agentdoc {command} ", monkeypatch, tree) == ["notes/", "notes.md"]
    assert complete(f"agentdoc {command} .ag", monkeypatch, tree) == [".agentdoc/"]


def test_commands_complete(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"doctor", "editor", "run", "watch"} <= set(complete("agentdoc ", monkeypatch, tree))
