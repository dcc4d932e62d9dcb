"""What a streaming reply's writes sync: every version is whole on disk before it is renamed
into place; only the region's opening and closing renames are synced into the folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentdoc.document import WriteLedger
from agentdoc.turn.writer import ReplyWriter

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nhello\n"


def test_streamed_writes_sync_their_file_and_the_region_ends_sync_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    writer = ReplyWriter(doc, WriteLedger(), "", "hello")
    writer.open()
    assert synced == ["file", "folder"]
    for body in ("Hi", "Hi there", "Hi there, how"):
        synced.clear()
        writer.flush(body)
        assert synced == ["file"]
        assert body in doc.read_text(encoding="utf-8")
    synced.clear()
    writer.close("Hi there, how are you?", None)
    assert synced == ["file", "folder"]
    assert "Hi there, how are you?" in doc.read_text(encoding="utf-8")
