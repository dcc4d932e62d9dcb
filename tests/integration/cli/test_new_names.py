"""`agentdoc new` makes only documents `agentdoc watch` answers: a name the daemon would never
read (not markdown, a sidecar's or an editor's) is refused with the name to use instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.daemon.watch.tree import wanted_name


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        ("notes.txt", "notes.md"),
        ("notes", "notes.md"),
        ("notes.thinking.md", None),
        ("notes.md~", None),
        ("notes.sync-conflict-20250101-101010-ABCDEFG.md", None),
    ],
)
def test_a_name_watch_never_answers_is_refused(
    tmp_path: Path, name: str, suggested: str | None
) -> None:
    path = tmp_path / name
    result = CliRunner().invoke(cli, ["new", str(path)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert not path.exists()
    assert "agentdoc watch" in result.output and "never" in result.output, result.output
    if suggested is not None:
        assert f"`agentdoc new {tmp_path / suggested}`" in result.output, result.output
    else:
        assert "agentdoc new" not in result.output, result.output


@pytest.mark.parametrize("name", ["notes.md", "Notes.MD", "notes.markdown"])
def test_a_markdown_name_is_made_and_is_one_watch_reads(tmp_path: Path, name: str) -> None:
    result = CliRunner().invoke(cli, ["new", str(tmp_path / name)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert wanted_name(name)
