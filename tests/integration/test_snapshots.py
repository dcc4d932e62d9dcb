"""The snapshot store and restoring from it, on real temporary folders with real git."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from watchdog.events import FileOpenedEvent, FileSystemEvent, FileSystemEventHandler

from agentdoc.config import Settings
from agentdoc.conversation.undoing import undo
from agentdoc.document import TEMP_PREFIX
from agentdoc.document import parse as document_parse
from agentdoc.errors import AgentdocError
from agentdoc.records import restoring, shadow, snapshots
from tests.support.clearance import own_leave
from tests.support.waiting import wait_for


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "text.txt").write_bytes(b"one\r\ntwo\r\nno newline")
    (folder / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (folder / "run.sh").write_text("#!/bin/sh\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "deep" / "er").mkdir(parents=True)
    (folder / "deep" / "er" / "file.txt").write_text("deep\n")
    os.symlink("text.txt", folder / "link")
    return folder


def files(folder: Path) -> dict[str, tuple[bytes, int, bool]]:
    """Every file (and symlink) under ``folder``: bytes (link target), mode, whether a link."""
    found = {}
    for p in sorted(folder.rglob("*")):
        if ".git" in p.parts:
            continue
        if p.is_symlink():
            found[str(p.relative_to(folder))] = (os.readlink(p).encode(), 0, True)
        elif p.is_file():
            found[str(p.relative_to(folder))] = (p.read_bytes(), p.stat().st_mode, False)
    return found


def take_back(store: shadow.Shadow, folder: Path, before: str, after: str) -> restoring.Plan:
    entry = snapshots.FolderRecord(str(folder), before, after)
    plan = restoring.plan([[entry]], store.changes)
    return plan


def mess_up(folder: Path) -> None:
    (folder / "text.txt").write_bytes(b"changed")
    (folder / "binary.bin").unlink()
    (folder / "run.sh").chmod(0o644)
    (folder / "new.txt").write_text("new\n")
    (folder / "deep" / "er" / "file.txt").unlink()
    (folder / "link").unlink()
    os.symlink("run.sh", folder / "link")
    (folder / "made" / "dirs").mkdir(parents=True)
    (folder / "made" / "dirs" / "x").write_bytes(b"\0\1\2")


def test_every_kind_of_change_comes_back_byte_for_byte_with_modes_and_links(
    tmp_path: Path, work: Path
) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    original = files(work)
    before = store.snapshot(work).tree
    mess_up(work)
    after = store.snapshot(work).tree
    plan = take_back(store, work, before, after)
    assert plan.refusals() == []
    restoring.apply(store, plan.writes)
    assert files(work) == original
    assert not (work / "made").exists()  # the folders made for a created file go with it
    assert (work / "deep" / "er").is_dir()


def test_the_shadow_lives_outside_the_folder_and_leaves_its_git_alone(
    tmp_path: Path, work: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / ".git" / "info" / "exclude").write_text("secret.key\n")
    (work / "secret.key").write_text("x")
    own_git = {p: p.read_bytes() for p in (work / ".git").rglob("*") if p.is_file()}
    store = shadow.Shadow(tmp_path / "shadow")
    snap = store.snapshot(work)
    listed = subprocess.run(
        ["git", f"--git-dir={store.git_dir}", "ls-tree", "-r", "--name-only", snap.tree],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split()
    assert "text.txt" in listed and "secret.key" not in listed
    assert not any(name.startswith(".git/") for name in listed)
    assert {p: p.read_bytes() for p in (work / ".git").rglob("*") if p.is_file()} == own_git


def test_gitignore_and_excluded_paths_are_not_recorded(tmp_path: Path, work: Path) -> None:
    (work / ".gitignore").write_text("*.log\nbuild/\n")
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(work, ["chat.md"]).tree
    (work / "out.log").write_text("log")
    (work / "build").mkdir()
    (work / "build" / "a.o").write_text("o")
    (work / "chat.md").write_text("the document changes all the time")
    after = store.snapshot(work, ["chat.md"]).tree
    assert store.changes(before, after) == []


def test_a_gitattributes_in_the_folder_changes_no_byte(tmp_path: Path, work: Path) -> None:
    (work / ".gitattributes").write_text("* text=auto eol=lf\n")
    store = shadow.Shadow(tmp_path / "shadow")
    snap = store.snapshot(work)
    entry = shadow.blob_id(work / "text.txt")
    assert entry is not None
    assert store.read_blob(entry.blob) == b"one\r\ntwo\r\nno newline"
    assert snap.tree


def test_a_file_over_the_size_cap_is_named_not_kept(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow, "FILE_LIMIT", 1000)
    store = shadow.Shadow(tmp_path / "shadow")
    first = store.snapshot(work)  # binary.bin is 1024 bytes
    assert set(first.skipped) == {"binary.bin"}
    (work / "binary.bin").write_bytes(b"y" * 2000)
    second = store.snapshot(work)
    entry = snapshots.FolderRecord(
        str(work), first.tree, second.tree, first.skipped, second.skipped
    )
    plan = restoring.plan([[entry]], store.changes)
    assert plan.unkept == [(str(work / "binary.bin"), "too big to keep a copy of")]


def test_a_kept_file_that_grows_too_big_loses_its_old_copy(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow, "FILE_LIMIT", 2000)
    store = shadow.Shadow(tmp_path / "shadow")
    first = store.snapshot(work)
    (work / "text.txt").write_bytes(b"x" * 3000)
    second = store.snapshot(work)
    assert "text.txt" in second.skipped
    # Its old copy is no longer in the tree: a later undo cannot put back a stale version.
    assert [c.path for c in store.changes(first.tree, second.tree)] == ["text.txt"]


def test_an_unchanged_folder_writes_the_same_tree(tmp_path: Path, work: Path) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    assert store.snapshot(work).tree == store.snapshot(work).tree


def test_undoing_refuses_a_file_changed_since_and_plans_turns_newest_first(
    tmp_path: Path, work: Path
) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    s0 = store.snapshot(work).tree
    (work / "text.txt").write_text("turn 1\n")
    s1 = store.snapshot(work).tree
    (work / "text.txt").write_text("turn 2\n")
    (work / "new.txt").write_text("turn 2\n")
    s2 = store.snapshot(work).tree
    turns = [
        [snapshots.FolderRecord(str(work), s0, s1)],
        [snapshots.FolderRecord(str(work), s1, s2)],
    ]
    plan = restoring.plan(turns, store.changes)
    assert plan.refusals() == []
    assert plan.writes[(str(work), "new.txt")] is None
    (work / "new.txt").write_text("the user's\n")
    refused = restoring.plan(turns, store.changes)
    assert refused.changed_since == [str(work / "new.txt")]
    restoring.apply(store, refused.writes)
    assert (work / "text.txt").read_bytes() == b"one\r\ntwo\r\nno newline"
    assert not (work / "new.txt").exists()


def test_forgetting_turns_prunes_their_trees(tmp_path: Path, work: Path) -> None:
    document = work / "chat.md"
    document.write_text("doc")
    env = {"AGENTDOC_STATE_DIR": str(tmp_path / "state"), "PATH": os.environ["PATH"]}
    snapshots.before_turn(document, 1, work, (), env)
    (work / "gone-soon.txt").write_text("only in turn 1's after-tree\n")
    gone = shadow.blob_id(work / "gone-soon.txt")
    snapshots.after_turn(document, 1, env)
    store = snapshots.shadow_for(document, env)
    record = snapshots.read_record(store)
    assert store.git_dir.is_relative_to(tmp_path / "state")
    after = record[1][0].after
    assert after is not None and record[1][0].before != after
    (work / "gone-soon.txt").unlink()
    store.snapshot(work, ["chat.md"])  # the index no longer holds the file
    snapshots.forget(document, [1], env)
    assert snapshots.read_record(store) == {}
    with pytest.raises(shadow.ShadowError):
        store.changes(after, after)
    with pytest.raises(shadow.ShadowError):  # its one file's copy went with it
        store.read_blobs([gone.blob if gone else "none"])


def test_undo_of_a_turn_without_tools_or_snapshots_still_takes_the_reply(
    tmp_path: Path,
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(
        "---\nagentdoc: {}\n---\n\n## User\n\nq1\n\n## Assistant\n\na1\n\n"
        "## User\n\nq2\n\n## Assistant\n\na2\n\n## User\n\n"
    )
    done = undo(path, Settings(), clear=own_leave, count=2)
    assert (done.turn, done.count, done.restored) == (1, 2, False)
    assert path.read_text().rstrip().endswith("q1")
    kept = (tmp_path / ".agentdoc" / "chat.md.undone.md").read_text()
    assert "a1" in kept and "q2" in kept and "a2" in kept
    with pytest.raises(AgentdocError, match="nothing to undo"):
        undo(path, Settings(), clear=own_leave)


def test_archiving_forgets_the_archived_turns_snapshots(tmp_path: Path, work: Path) -> None:
    from agentdoc.conversation import archive_document

    path = work / "chat.md"
    exchanges = "".join(f"## User\n\nq{n}\n\n## Assistant\n\na{n}\n\n" for n in (1, 2, 3))
    path.write_text(f"---\nagentdoc: {{}}\n---\n\n{exchanges}## User\n\n")
    for turn in (1, 2, 3):
        snapshots.before_turn(path, turn, work, ())
        snapshots.after_turn(path, turn)
    archive_document(path, keep=1)
    assert set(snapshots.read_record(snapshots.shadow_for(path))) == {3}


def test_a_folder_with_too_many_files_is_not_walked_again(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow, "MAX_NEW_FILES", 3)
    store = shadow.Shadow(tmp_path / "shadow")
    with pytest.raises(shadow.ShadowError, match="more than 3 files"):
        store.snapshot(work)
    monkeypatch.setattr(shadow, "MAX_NEW_FILES", 1000)
    with pytest.raises(shadow.ShadowError, match="more than 3 files"):  # remembered
        store.snapshot(work)


def test_state_folders_at_any_depth_are_no_turns_work(tmp_path: Path, work: Path) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(work).tree
    for state in (work / ".agentdoc", work / "deep" / ".agentdoc"):
        state.mkdir()
        (state / "other.md.status.json").write_text("{}")
    assert store.changes(before, store.snapshot(work).tree) == []


def test_agentdocs_own_half_written_files_are_no_turns_work(tmp_path: Path, work: Path) -> None:
    """A snapshot taken while the daemon writes the reply (beside the request, not before it)
    can find the document's temporary copy: were it kept, undo would put that file back."""
    store = shadow.Shadow(tmp_path / "shadow")
    for half in (work / f"{TEMP_PREFIX}chat1", work / "deep" / f"{TEMP_PREFIX}notes2"):
        half.write_text("---\nagentdoc: {}\n---\n")
    before = store.snapshot(work).tree
    for half in work.rglob(f"{TEMP_PREFIX}*"):
        half.unlink()
    assert store.changes(before, store.snapshot(work).tree) == []


def test_nothing_is_restored_through_a_symlink_put_in_the_way(tmp_path: Path, work: Path) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(work).tree
    (work / "deep" / "er" / "file.txt").write_text("the turn's\n")
    after = store.snapshot(work).tree
    plan = take_back(store, work, before, after)
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "deep" / "er" / "file.txt").rename(outside / "file.txt")
    (work / "deep" / "er").rmdir()
    os.symlink(outside, work / "deep" / "er")
    with pytest.raises(AgentdocError, match="leads outside"):
        restoring.apply(store, plan.writes)
    assert (outside / "file.txt").read_text() == "the turn's\n"


def test_undo_again_goes_on_back_until_the_person_edits_the_prompt(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    exchanges = "".join(f"## User\n\nq{n}\n\n## Assistant\n\na{n}\n\n" for n in (1, 2, 3))
    path.write_text(f"---\nagentdoc: {{}}\n---\n\n{exchanges}## User\n\n<!-- a note -->\n")
    assert undo(path, Settings(), clear=own_leave).turn == 3
    assert "<!-- a note -->" in path.read_text()
    assert undo(path, Settings(), clear=own_leave).turn == 2
    doc = document_parse(path.read_text())
    assert doc.pending_prompt() == "q2" and doc.turn_count() == 1
    assert "q3" not in path.read_text() and "<!-- a note -->" not in path.read_text()
    kept = (tmp_path / ".agentdoc" / "chat.md.undone.md").read_text()
    assert "q3" in kept and "<!-- a note -->" in kept and "a2" in kept
    path.write_text(path.read_text().replace("q2", "q2, reworded"))
    with pytest.raises(AgentdocError, match="a prompt waits below the last reply"):
        undo(path, Settings(), clear=own_leave)


def test_a_folder_inside_a_repository_follows_the_gitignore_above_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    folder = repo / "notes"
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("node_modules/\n*.log\n/notes/kept.txt\n!important.log\n")
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(folder).tree
    (folder / "node_modules").mkdir()
    (folder / "node_modules" / "big.js").write_text("x")
    (folder / "build.log").write_text("log")
    (folder / "important.log").write_text("kept")
    (folder / "kept.txt").write_text("an anchored pattern is left out: kept")
    changed = {c.path for c in store.changes(before, store.snapshot(folder).tree)}
    assert changed == {"important.log", "kept.txt"}


def test_undo_of_more_turns_than_the_document_holds_says_how_many_it_has(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    exchanges = "".join(f"## User\n\nq{n}\n\n## Assistant\n\na{n}\n\n" for n in (3, 4))
    text = f"---\nagentdoc:\n  archived: 2\n---\n\n{exchanges}## User\n\n"
    path.write_text(text)
    with pytest.raises(
        AgentdocError, match=r"cannot undo 3 turns; the document holds 2 \(turns 1-2"
    ):
        undo(path, Settings(), clear=own_leave, count=3)
    assert path.read_text() == text


def test_the_daemon_can_tell_undos_own_write_from_a_save(tmp_path: Path) -> None:
    from agentdoc.conversation.undoing import undo_wrote

    path = tmp_path / "chat.md"
    path.write_text("---\nagentdoc: {}\n---\n\n## User\n\nq\n\n## Assistant\n\na\n\n## User\n\n")
    assert not undo_wrote(path, path.read_text())
    undo(path, Settings(), clear=own_leave)
    assert undo_wrote(path, path.read_text())
    assert not undo_wrote(path, path.read_text() + "an edit\n")


def test_a_snapshot_that_lost_a_copy_changes_no_file(tmp_path: Path, work: Path) -> None:
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(work).tree
    (work / "text.txt").write_text("the turn's\n")
    (work / "new.txt").write_text("created\n")
    plan = take_back(store, work, before, store.snapshot(work).tree)
    assert plan.writes[(str(work), "text.txt")] is not None
    plan.writes[(str(work), "text.txt")] = shadow.Entry("100644", "1" * 40)  # a copy not there
    with pytest.raises(shadow.ShadowError):
        restoring.apply(store, plan.writes)
    assert (work / "new.txt").exists() and (work / "text.txt").read_text() == "the turn's\n"


def test_many_snapshots_keep_few_packs_and_every_copy(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shadow, "MAX_PACKS", 3)
    store = shadow.Shadow(tmp_path / "shadow")
    trees = [store.snapshot(work, keep_as="turns/0").tree]
    for n in range(1, 7):
        (work / "text.txt").write_text(f"version {n}\n")
        trees.append(store.snapshot(work, keep_as=f"turns/{n}").tree)
    assert len(list((store.git_dir / "objects" / "pack").glob("*.pack"))) <= 4
    plan = take_back(store, work, trees[0], trees[-1])
    restoring.apply(store, plan.writes)
    assert (work / "text.txt").read_bytes() == b"one\r\ntwo\r\nno newline"


def test_other_session_documents_are_no_turns_work(tmp_path: Path, work: Path) -> None:
    other = work / "other.md"
    other.write_text("---\nagentdoc: {}\n---\n\n## User\n\nq\n")
    plain = work / "notes.md"
    plain.write_text("notes\n")
    store = shadow.Shadow(tmp_path / "shadow")
    before = store.snapshot(work).tree
    (work / ".agentdoc").mkdir()
    (work / ".agentdoc" / "other.md.status.json").write_text("{}")  # now agentdoc's to keep
    other.write_text(other.read_text() + "\n## Assistant\n\nits own reply\n")
    plain.write_text("notes, edited by the turn\n")
    after = store.snapshot(work).tree
    # The document leaves the record once it is one (its old copy too); plain notes stay in it.
    assert {c.path: c.after for c in store.changes(before, after)}.keys() == {
        "other.md",
        "notes.md",
    }
    assert [c.after for c in store.changes(before, after) if c.path == "other.md"] == [None]
    assert store.changes(after, store.snapshot(work).tree) == []
    # Undo puts the notes back and leaves the document's conversation alone.
    plan = take_back(store, work, before, after)
    assert plan.refusals() == [] and set(plan.writes) == {(str(work), "notes.md")}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify reports opens")
def test_a_session_document_is_not_read_once_it_is_one(tmp_path: Path) -> None:
    """git reads a file its index holds again when it looks "racily clean" (changed in the tick
    the index was written); a document recorded before it had agentdoc state must leave the
    index unread, or a watching daemon takes git's read for a person opening it in an editor."""
    folder = tmp_path / "work"
    folder.mkdir()
    doc, marker = folder / "b.md", folder / "marker.txt"
    doc.write_text("---\nagentdoc: {}\n---\n\n## User\n\n")
    marker.write_text("read last\n")
    future = os.stat(doc).st_mtime + 3600  # always racy: newer than any index git writes
    os.utime(doc, (future, future))
    store = shadow.Shadow(tmp_path / "shadow")
    store.snapshot(folder)  # no state beside it yet: an ordinary file, recorded
    (folder / ".agentdoc").mkdir()
    (folder / ".agentdoc" / "b.md.status.json").write_text("{}")

    opened: list[str] = []

    class Opens(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            if isinstance(event, FileOpenedEvent):
                opened.append(os.path.basename(str(event.src_path)))

    from watchdog.observers.inotify import InotifyObserver  # opens are reported by inotify alone

    observer = InotifyObserver()
    observer.schedule(Opens(), str(folder))
    observer.start()
    try:
        store.snapshot(folder, exclude=[".agentdoc"])
        marker.read_text()  # inotify reports in order: once this is seen, the snapshot's are
        wait_for(lambda: "marker.txt" in opened, what="the marker's open")
    finally:
        observer.stop()
        observer.join(10)
    assert "b.md" not in opened
