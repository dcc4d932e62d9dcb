"""What a streaming reply's writes sync: every version is whole on disk before it is renamed
into place; only the region's opening and closing renames are synced into the folder."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.document import WriteLedger
from agentdoc.errors import AgentdocError
from agentdoc.turn import writer as writer_module
from agentdoc.turn.writer import RegionGone, ReplyWriter, load
from tests.support.fsyncs import record_fsyncs

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nhello\n"


def test_streamed_writes_sync_their_file_and_the_region_ends_sync_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    synced = record_fsyncs(monkeypatch)
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


@contextlib.contextmanager
def saving_in_place(doc: Path, saved: str, after: float = 0.02) -> Iterator[None]:
    """The block runs while an editor saves `saved` in place: the file is emptied (the save has
    begun), and written `after` seconds later."""
    doc.write_bytes(b"")
    timer = threading.Timer(after, lambda: doc.write_text(saved, encoding="utf-8"))
    timer.start()
    try:
        yield
    finally:
        timer.join()


@pytest.mark.parametrize(
    "after",
    [
        # An editor on this machine: the file is empty for a moment.
        pytest.param(0.02, id="an-editor-here"),
        # A phone's sync tool read its editor's in-place save between the truncate and the
        # write, and delivers the empty file here seconds before the text (seen with two real
        # Syncthings under load): the file stays empty far longer than a save takes.
        pytest.param(0.5, id="a-sync-tool-delivering-it"),
    ],
)
def test_a_save_written_in_place_is_not_taken_for_the_reply_deleted(
    tmp_path: Path, after: float
) -> None:
    """A save written in place empties the file before it writes it: a flush that reads it in
    that moment finds no reply. It waits for the save to land, and merges with it."""
    doc = tmp_path / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    writer = ReplyWriter(doc, WriteLedger(), "", "hello")
    writer.open()
    writer.flush("Hi")
    saved = doc.read_text(encoding="utf-8") + "\n## User\n\nNext question?\n"
    with saving_in_place(doc, saved, after):
        writer.flush("Hi there")  # raised RegionGone: "the streaming reply was deleted"
    writer.close("Hi there, all of it.", None)
    text = doc.read_text(encoding="utf-8")
    assert "Hi there, all of it." in text and "Next question?" in text


def test_a_document_emptied_for_good_cancels_the_reply_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_module, "EMPTY_GRACE", 0.3)
    doc = tmp_path / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    writer = ReplyWriter(doc, WriteLedger(), "", "hello")
    writer.open()
    writer.flush("Hi")
    doc.write_bytes(b"")
    with pytest.raises(RegionGone):
        writer.flush("Hi there")
    assert doc.read_bytes() == b""


@pytest.mark.parametrize(
    "after",
    [
        0.02,
        # A loaded machine: the editor's write came well after its truncate (a CI run found
        # the turn failed when it came later than one look of the wait).
        0.3,
    ],
)
def test_a_turn_that_starts_in_the_middle_of_a_save_reads_the_version_it_lands_as(
    tmp_path: Path, after: float
) -> None:
    """A turn reads its document as it starts. An editor that autosaves in place may be between
    emptying the file and writing it: the turn waits for that save, and was failed with "not a
    session document" instead (the prompt then lost: the save was taken as seen)."""
    doc = tmp_path / "chat.md"
    with saving_in_place(doc, DOC, after):
        _text, parsed = load(doc)
    assert parsed.turn_count() == 0 and "hello" in parsed.text


def test_a_document_that_stays_broken_still_fails_the_turn(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text("---\ntitle: notes\n---\n\n## User\n\nhello\n", encoding="utf-8")
    with pytest.raises(AgentdocError, match="not a session document"):
        load(doc)
