"""Writing documents in pieces, hashing only what changed, and telling our own opens apart."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentdoc.document import fileio, ownopens
from agentdoc.document.fileio import atomic_write, write_bytes
from agentdoc.document.ledger import PrefixDigest, WriteLedger, digest
from tests.support.fsyncs import record_fsyncs

LONG = b"".join(b"line %d of the conversation so far\n" % n for n in range(10_000))  # ~350 KB


def test_a_prefix_digest_is_the_digest_of_the_whole() -> None:
    digests = PrefixDigest()
    for tail in (b"reply 1\n", b"reply 1, longer\n", b"", b"reply 2\n"):
        assert digests.digest(LONG + tail, len(LONG), [tail]) == digest(LONG + tail)


def test_a_prefix_digest_notices_a_changed_prefix() -> None:
    digests = PrefixDigest()
    digests.digest(LONG + b"x", len(LONG), [b"x"])
    edited = b"an edit at the top\n" + LONG[19:]  # same length, other bytes
    assert digests.digest(edited + b"x", len(edited), [b"x"]) == digest(edited + b"x")


def test_pieces_are_written_one_after_the_other(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"old\n")
    view = memoryview(LONG)
    assert atomic_write(doc, [view[:100], b"<inserted>", view[100:]]) is None
    assert doc.read_bytes() == LONG[:100] + b"<inserted>" + LONG[100:]


def test_pieces_cut_short_by_the_kernel_are_written_on_from_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.writev
    calls: list[int] = []

    def short(fd: int, buffers: list[memoryview]) -> int:
        calls.append(len(buffers))
        return real(fd, [b"".join(buffers)[:7]])  # at most seven bytes a call

    monkeypatch.setattr(os, "writev", short)
    doc = tmp_path / "doc.md"
    pieces = [b"first piece|", b"", b"second|", b"third piece, the last"]
    assert atomic_write(doc, pieces) is None
    assert doc.read_bytes() == b"".join(pieces)
    assert calls[0] == 3  # every piece in the first call, the empty one left out


@pytest.mark.parametrize(
    "landed",
    [
        LONG[:-1] + b"!",  # a save of the same size, changed at its end (past the first chunk)
        LONG + b"typed\n",
        b"",
    ],
    ids=["same size", "longer", "emptied"],
)
def test_a_save_displaced_by_our_write_is_handed_back(tmp_path: Path, landed: bytes) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(landed)  # what is on disk when we write: not what we read (LONG)
    if fileio._EXCHANGE is None:
        pytest.skip("this filesystem cannot swap two files atomically")
    assert atomic_write(doc, b"ours\n", expected=LONG) == landed
    assert doc.read_bytes() == b"ours\n"


def test_nothing_is_handed_back_when_nothing_landed(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(LONG)
    assert atomic_write(doc, b"ours\n", expected=LONG) is None
    assert doc.read_bytes() == b"ours\n"


def test_each_own_open_is_taken_back_once(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"x\n")
    fileio.read_bytes(doc)
    fileio.read_bytes(doc)
    assert ownopens.take_own_open(doc)
    assert ownopens.take_own_open(doc)
    assert not ownopens.take_own_open(doc)  # a third open is someone else's


def test_an_own_open_whose_event_never_came_expires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "doc.md"
    ownopens.note_own_open(doc)
    monkeypatch.setattr(ownopens, "OWN_OPEN_TTL", -1.0)  # as if its time had passed
    assert not ownopens.take_own_open(doc)


def test_many_opens_taken_back_never_break_the_next_one(tmp_path: Path) -> None:
    # More files than the token table keeps (a start-up walk of a tree of notes), each of
    # whose opens was taken back: the next open sweeps the table and must not fail.
    for n in range(1100):
        note = tmp_path / f"note{n}.md"
        ownopens.note_own_open(note)
        assert ownopens.take_own_open(note)
        ownopens.note_own_open(tmp_path / f"kept{n}.md")
    ownopens.note_own_open(tmp_path / "one more.md")
    assert ownopens.take_own_open(tmp_path / "one more.md")


def test_the_ledger_knows_its_last_write_by_its_stamp_until_someone_saves(tmp_path: Path) -> None:
    doc, ledger = tmp_path / "doc.md", WriteLedger()
    doc.write_text("the person's\n")
    write_bytes(doc, b"ours\n", ledger)
    st = doc.stat()
    assert ledger.is_own_stamp(doc, (st.st_mtime_ns, st.st_size, st.st_ino))
    doc.write_text("the person's save after ours\n")
    st = doc.stat()
    assert not ledger.is_own_stamp(doc, (st.st_mtime_ns, st.st_size, st.st_ino))
    assert not ledger.is_own_stamp(doc, None)


# A streamed write (not durable) syncs its file but not the folder: every version renamed into
# place is whole on disk (its file is synced first); only the rename may be forgotten by a
# machine that stops, leaving the version before it.
@pytest.mark.parametrize(
    ("durable", "syncs"),
    [(True, ["file", "folder"]), (False, ["file"])],
    ids=["a durable write syncs the file and then its folder", "a streamed write syncs its file"],
)
def test_what_a_write_syncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, durable: bool, syncs: list[str]
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"old\n")
    synced = record_fsyncs(monkeypatch)
    write_bytes(doc, b"new\n", WriteLedger(), durable=durable)
    assert synced == syncs
    assert doc.read_bytes() == b"new\n"


def test_a_written_file_keeps_the_documents_mode(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    for mode in (0o640, 0o604, 0o600, 0o664):
        doc.write_bytes(b"old\n")
        doc.chmod(mode)
        atomic_write(doc, b"new\n")
        assert stat.S_IMODE(doc.stat().st_mode) == mode
