"""The rescan index: what a folder's mtime shows, at one stat per folder and followed file."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdoc.daemon.startup import read_found
from agentdoc.daemon.watch import tree
from agentdoc.daemon.watch.tree import TreeIndex, build
from agentdoc.document import WriteLedger
from tests.support.fsyncs import record_stats

OLD_NS = 1_600_000_000 * 10**9  # long before now: a folder mtime the index trusts


def _age(top: Path, when: int = OLD_NS) -> None:
    """Give every folder an old mtime, as a tree the user has not touched in a while has."""
    for dirpath, _dirs, _files in os.walk(top):
        os.utime(dirpath, ns=(when, when))


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    top = tmp_path / "notes"
    for sub in ("a", "b", "a/deep"):
        (top / sub).mkdir(parents=True)
        for n in range(3):
            (top / sub / f"n{n}.md").write_text(f"# note {n}\n")
    (top / "chat.md").write_text("---\nagentdoc: {}\n---\n")
    (top / "a" / "data.txt").write_text("not markdown\n")
    (top / ".git").mkdir()
    (top / ".git" / "x.md").write_text("ignored\n")
    _age(top)
    return top


def _index(top: Path) -> TreeIndex:
    return build([top], [], lambda _p: None)


def _age_after(change: Callable[[Path], object]) -> Callable[[Path], object]:
    def run(top: Path) -> None:
        change(top)
        _age(top, OLD_NS + 10**9)  # a folder change moves its mtime, yet still in the past

    return run


def _rename_over(top: Path) -> None:
    (top / "a" / "n0.md.new").write_text("# replaced\n")
    os.replace(top / "a" / "n0.md.new", top / "a" / "n0.md")


def _remove_folder(top: Path) -> None:
    for name in os.listdir(top / "a" / "deep"):
        (top / "a" / "deep" / name).unlink()
    (top / "a" / "deep").rmdir()


def _new_folder(top: Path) -> None:
    (top / "c" / "d").mkdir(parents=True)
    (top / "c" / "d" / "new.md").write_text("# new\n")


@pytest.mark.parametrize(
    ("change", "reported"),
    [
        (lambda top: None, set()),
        (_age_after(lambda top: (top / "b" / "new.md").write_text("# new\n")), {"b/new.md"}),
        (_age_after(lambda top: (top / "b" / "n1.md").unlink()), {"b/n1.md"}),
        (_age_after(_rename_over), {"a/n0.md"}),  # Vim/Emacs-style replacing save
        (_age_after(_new_folder), {"c/d/new.md"}),
        (_age_after(_remove_folder), {"a/deep/n0.md", "a/deep/n1.md", "a/deep/n2.md"}),
        (_age_after(lambda top: (top / "a" / "new.txt").write_text("x")), set()),
        (_age_after(lambda top: (top / ".git" / "y.md").write_text("x")), set()),
    ],
)
def test_rescan_reports_what_changed_in_folders(
    notes: Path, change: Callable[[Path], object], reported: set[str]
) -> None:
    index = _index(notes)
    change(notes)
    assert {str(p.relative_to(notes)) for p in index.rescan()} == reported
    assert index.rescan() == []  # reported once


def test_in_place_rewrites_are_seen_for_followed_files_only(notes: Path) -> None:
    index = _index(notes)
    index.follow(notes / "chat.md", tree.stamp_of(notes / "chat.md"))
    (notes / "chat.md").write_text("---\nagentdoc: {}\n---\n\n## User\n\nhi\n")
    (notes / "b" / "n2.md").write_text("# rewritten in place, left to the observer\n")
    assert index.rescan() == [notes / "chat.md"]
    assert index.rescan() == []


def test_a_quiet_rescan_stats_folders_and_followed_files_only(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(200):
        (notes / "b" / f"plain{n}.md").write_text("# plain\n")
    _age(notes)
    index = _index(notes)
    index.follow(notes / "chat.md", tree.stamp_of(notes / "chat.md"))
    looked_at = record_stats(monkeypatch)
    assert index.rescan() == []
    # One stat per folder (notes, a, b, a/deep) and per followed file, none per plain note.
    assert sorted(looked_at) == sorted(
        str(p) for p in (notes, notes / "a", notes / "b", notes / "a" / "deep", notes / "chat.md")
    )


def test_a_folder_changed_within_its_mtime_tick_is_listed_again(notes: Path) -> None:
    (notes / "b" / "early.md").write_text("# early\n")  # b's mtime is now: not trusted yet
    listed = (notes / "b").stat().st_mtime_ns
    index = _index(notes)
    (notes / "b" / "late.md").write_text("# same tick\n")
    os.utime(notes / "b", ns=(listed, listed))  # as a coarse clock would have left it
    assert notes / "b" / "late.md" in index.rescan()


def test_a_sweep_sees_notes_rewritten_in_place_and_never_looks_inside_git(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = _index(notes)
    (notes / "b" / "n2.md").write_text("---\nagentdoc: {}\n---\n\nnow a conversation\n")
    (notes / ".git" / "x.md").write_text("git's own file, changed\n")
    looked_at = record_stats(monkeypatch)
    assert index.sweep() == [notes / "b" / "n2.md"]
    assert index.sweep() == []  # reported once
    assert not any(".git" in path for path in looked_at)
    assert index.rescan() == []  # and not again by the next rescan


@pytest.mark.parametrize(
    ("text", "could_be"),
    [
        pytest.param("# Note\n\nText.\n", False, id="no-frontmatter"),
        pytest.param(
            "---\ntitle: Note\ntags: [a]\n---\n\n# Note\n", False, id="a-notes-frontmatter"
        ),
        pytest.param("---\nagentdoc: {}\n---\n\n## User\n\n", True, id="a-session"),
        pytest.param("\ufeff---\ntitle: x\nagentdoc:\n  agent: gemini\n---\n", True, id="bom"),
        # Too long to judge from its start: read whole, as before.
        pytest.param("---\ntitle: x\n" + "k: v\n" * 20_000 + "---\n", True, id="long"),
    ],
)
def test_start_up_tells_most_notes_from_one_short_read(
    tmp_path: Path, text: str, could_be: bool
) -> None:
    """A vault's notes mostly have frontmatter of their own: one read of their start tells
    they are no session document, without reading them again whole."""
    note = tmp_path / "note.md"
    note.write_text(text, encoding="utf-8")
    assert tree.starts_as_session(note) is could_be


def test_start_up_looks_at_a_plain_note_with_one_read_and_no_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Start-up does this for each of a vault's notes, the daemon's watch hearing every open.
    note = tmp_path / "note.md"
    note.write_text("---\ntitle: Note\n---\n\n# Note\n", encoding="utf-8")
    looked_at = record_stats(monkeypatch)
    assert read_found(note, WriteLedger()) is None
    assert looked_at == []


def test_a_fifo_put_where_a_note_was_listed_does_not_hold_start_up(tmp_path: Path) -> None:
    fifo = tmp_path / "note.md"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for one forever
    answers: list[bool] = []
    looking = threading.Thread(target=lambda: answers.append(tree.starts_as_session(fifo)))
    looking.start()
    looking.join(timeout=10)
    held = looking.is_alive()
    if held:  # released before failing, so the test leaves no thread behind
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        looking.join()
    assert not held
    assert answers == [False]


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes written a moment ago count as settled: the glance vouches for them as it would
    for notes older than their filesystem clock's tick."""
    monkeypatch.setattr(tree, "FINE_RACY_NS", 0)


@pytest.mark.usefixtures("settled")
def test_the_glance_vouches_for_plain_notes_once_each(notes: Path) -> None:
    seen = tree.Glance()
    seen.take([notes], [])
    plain = sorted(Path(p).relative_to(notes).as_posix() for p in seen.plain)
    assert plain == sorted(f"{sub}/n{n}.md" for sub in ("a", "a/deep", "b") for n in range(3))
    note = notes / "a" / "n0.md"
    assert seen.still_plain(note)
    assert not seen.still_plain(note)  # asked once: discovery looks at each note once
    assert not seen.still_plain(notes / "chat.md")  # a session document is read as ever


def _same_size_same_mtime(note: Path) -> None:
    """Rewritten in place to the same size, its mtime put back (`rsync --inplace --times`)."""
    st = note.stat()
    with note.open("r+b") as f:
        f.write(b"---\nagentdoc: {}\n---"[: st.st_size].ljust(st.st_size, b"\n"))
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize(
    "change",
    [
        pytest.param(_same_size_same_mtime, id="in-place-same-size-and-mtime"),
        pytest.param(lambda n: n.write_text("---\nagentdoc: {}\n---\n"), id="rewritten"),
        pytest.param(
            lambda n: (n.with_suffix(".new").write_text("# x\n"), n.with_suffix(".new").replace(n)),
            id="replaced",
        ),
        pytest.param(lambda n: n.unlink(), id="deleted"),
    ],
)
def test_a_note_changed_after_the_glance_is_read_again(
    notes: Path, change: Callable[[Path], object]
) -> None:
    seen = tree.Glance()
    seen.take([notes], [])
    note = notes / "b" / "n1.md"
    change(note)
    assert not seen.still_plain(note)


def test_the_glance_does_not_vouch_for_a_note_changed_within_its_clock_tick(
    notes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The notes were written just now: a save in the same tick would leave the same stat.
    monkeypatch.setattr(tree, "FINE_RACY_NS", 3600 * 10**9)
    seen = tree.Glance()
    seen.take([notes], [])
    assert seen.plain == {}
