"""`agentdoc demo`, as the README's first command runs it: the real CLI, offline."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from agentdoc.cli.demo import run_demo
from agentdoc.document import parser as document
from tests.support.claude_cli import require_claude


@pytest.mark.e2e
def test_demo_streams_two_turns_into_one_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDOC_CLAUDE", str(require_claude()))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    doc = run_demo(Path("demo"), delay=0.0, out=out)  # a relative folder, as in the README
    parsed = document.parse(doc.read_text())
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    assert "It lasts." in parsed.turns[1].content
    # The second turn resumed the first turn's session rather than rebuilding it.
    assert "not found" not in parsed.turns[3].content
    assert parsed.meta.session is not None
    shown = out.getvalue()
    assert "Durability, editability" in shown  # the thinking sidecar is shown too
    # The replies streamed into the terminal, each after its prompt, then what to do next.
    first = shown.index("1. **It lasts.**")
    assert shown.index("Give me three short reasons.") < first < shown.index("steer it by editing")
    assert shown.rstrip().endswith("`agentdoc --help` lists every command.")
    assert "agentdoc run notes/first.md" in shown
    assert os.path.isabs(doc)
