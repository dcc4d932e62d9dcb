"""The one read of a settled save: what `capture` puts in a snapshot, on real files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentdoc.config import Settings
from agentdoc.daemon import capture
from agentdoc.daemon.watch.tree import stamp_of
from agentdoc.document import WriteLedger, digest, parser

ASKING = "---\nagentdoc: {}\n---\n\n## User\n\nhi there\n"


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(ASKING)
    return path


def test_a_save_is_read_into_one_value(doc: Path) -> None:
    snap = capture.take(doc, Settings(), WriteLedger())
    assert snap.data == ASKING.encode() and snap.digest == digest(snap.data)
    assert snap.session and snap.prompt == "hi there" and not snap.own_content
    assert not snap.git_busy and not snap.gone and not snap.git_wrote


def test_the_snapshot_parses_its_text_once(doc: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[str] = []
    original = parser._parse

    def counting(text: str, meta: Any) -> parser.Document:
        parses.append(text)
        return original(text, meta)

    monkeypatch.setattr(parser, "_parse", counting)
    snap = capture.take(doc, Settings(), WriteLedger())
    assert snap.prompt == "hi there" and snap.settings_problem is None and not snap.marker
    assert snap.document is snap.document
    assert len(parses) == 1


def test_git_holding_the_tree_reads_nothing(doc: Path) -> None:
    (doc.parent / ".git").mkdir()
    (doc.parent / ".git" / "index.lock").touch()
    snap = capture.take(doc, Settings(), WriteLedger())
    assert snap.git_busy and snap.data is None and not snap.gone


def test_a_running_turns_own_write_is_not_read_again(doc: Path) -> None:
    ledger = WriteLedger()
    stamp = stamp_of(doc)
    assert stamp is not None
    ledger.record_stamp(doc, stamp)
    assert capture.take(doc, Settings(), ledger, turn_running=True).turn_stamp
    assert capture.take(doc, Settings(), ledger).data is not None  # no turn: read as a save


def test_own_content_and_a_version_already_seen_are_not_looked_into(doc: Path) -> None:
    ledger = WriteLedger()
    ledger.record(doc, doc.read_bytes())
    own = capture.take(doc, Settings(), ledger)
    assert own.own_content and "_parsed" not in own.__dict__  # nothing parsed
    seen = capture.take(doc, Settings(), WriteLedger(), seen=digest(doc.read_bytes()))
    assert "_parsed" not in seen.__dict__


def test_a_deleted_file_is_gone(doc: Path) -> None:
    doc.unlink()
    assert capture.take(doc, Settings(), WriteLedger()).gone
