"""Where agentdoc keeps a document's own state: beside it, or out of any sync in a synced folder."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentdoc.daemon.lock import TreeLock, find_daemon
from agentdoc.daemon.synced.kept import kept_copies
from agentdoc.localstate import FRESH_FOR, move_out, state_folder
from agentdoc.records import Status, now_iso, write_status
from agentdoc.records.status import (
    all_statuses,
    cancel_path,
    request_cancel,
    take_cancel_request,
)
from agentdoc.userstate import user_state_dir


def synced(folder: Path) -> Path:
    (folder / ".stfolder").mkdir(parents=True)
    return folder


def test_an_ordinary_folder_keeps_its_state_beside_its_documents(tmp_path: Path) -> None:
    assert state_folder(tmp_path) == tmp_path / ".agentdoc"


def test_a_synced_folder_keeps_its_state_under_the_user_state_folder(tmp_path: Path) -> None:
    notes = synced(tmp_path / "notes")
    (notes / "sub").mkdir()
    here, below = state_folder(notes), state_folder(notes / "sub")
    assert user_state_dir() in here.parents
    assert below == here.parent / "sub" / ".agentdoc"
    assert notes not in here.parents


def test_two_synced_folders_of_the_same_name_keep_apart(tmp_path: Path) -> None:
    one, two = synced(tmp_path / "a" / "notes"), synced(tmp_path / "b" / "notes")
    assert state_folder(one) != state_folder(two)


def test_the_config_s_synced_list_counts_too(tmp_path: Path) -> None:
    listed = tmp_path / "listed"
    listed.mkdir()
    Path(os.environ["AGENTDOC_CONFIG"]).write_text(f'synced = ["{listed}"]\n')
    assert user_state_dir() in state_folder(listed).parents


def test_a_status_in_a_synced_folder_is_written_out_of_it_and_still_found(
    tmp_path: Path,
) -> None:
    notes = synced(tmp_path / "notes")
    (notes / "sub").mkdir()
    (notes / "sub" / "chat.md").write_text("x")
    write_status(
        notes / "sub" / "chat.md", Status(document="chat.md", state="idle", updated=now_iso())
    )
    assert not list(notes.rglob(".agentdoc"))
    assert [s.document for s in all_statuses(notes)] == ["chat.md"]
    assert [s.document for s in all_statuses(tmp_path)] == ["chat.md"]  # from above it too


def test_an_existing_state_folder_is_moved_out_keeping_both_copies_on_a_clash(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notes = synced(tmp_path / "notes")
    old = notes / ".agentdoc"
    (old / "conflicts").mkdir(parents=True)
    (old / "chat.md.turns.json").write_text('{"1": {}}')
    (old / "chat.md.history.md").write_text("from the tree")
    (old / "conflicts" / "chat.sync-conflict-1.md").write_text("copy")
    (old / "daemon.lock").write_text("{}")
    target = state_folder(notes)
    target.mkdir(parents=True)
    (target / "chat.md.history.md").write_text("already here")

    told = move_out(notes)

    assert not old.exists()
    assert (target / "chat.md.turns.json").read_text() == '{"1": {}}'
    assert (target / "chat.md.history.md").read_text() == "already here"
    assert (target / "chat.md.history.md.from-synced-folder").read_text() == "from the tree"
    assert (target / "conflicts" / "chat.sync-conflict-1.md").read_text() == "copy"
    (notes / "chat.md").write_text("x")
    assert kept_copies(notes) == [target / "conflicts" / "chat.sync-conflict-1.md"]
    assert len(told) == 1 and "chat.md.history.md" in told[0] and str(old) in told[0]


def test_an_ordinary_folder_s_state_stays_where_it_is(tmp_path: Path) -> None:
    (tmp_path / ".agentdoc").mkdir()
    (tmp_path / ".agentdoc" / "chat.md.turns.json").write_text("{}")
    assert move_out(tmp_path) == []
    assert (tmp_path / ".agentdoc" / "chat.md.turns.json").exists()


def test_state_written_first_in_a_synced_folder_below_the_watch_takes_the_old_state_along(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    notes = synced(tmp_path / "notes")
    (notes / ".agentdoc").mkdir()
    (notes / ".agentdoc" / "chat.md.turns.json").write_text('{"2": {}}')
    (notes / "chat.md").write_text("x")
    with caplog.at_level(logging.WARNING):
        write_status(notes / "chat.md", Status(document="chat.md", state="idle", updated=now_iso()))
    assert not (notes / ".agentdoc").exists()
    assert (state_folder(notes) / "chat.md.turns.json").read_text() == '{"2": {}}'
    assert "would reach every device" in caplog.text


def test_the_daemon_lock_of_a_synced_folder_is_out_of_it_and_found(tmp_path: Path) -> None:
    notes = synced(tmp_path / "notes")
    lock = TreeLock([notes])
    lock.acquire()
    try:
        assert not (notes / ".agentdoc").exists()
        holder = find_daemon(notes / "chat.md")
        assert holder is not None and holder.pid == os.getpid() and holder.folder == notes
        with pytest.raises(Exception, match="already watches"):
            TreeLock([tmp_path]).acquire()  # a daemon above it sees the one below
    finally:
        lock.release()


def test_a_turns_cancel_look_follows_its_folder_becoming_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = SimpleNamespace(now=1000.0)
    fake = SimpleNamespace(monotonic=lambda: clock.now)
    monkeypatch.setattr("agentdoc.localstate.time", fake)
    notes = tmp_path / "notes"
    notes.mkdir()
    doc = notes / "chat.md"
    doc.write_text("# chat\n")
    request_cancel(doc)
    assert take_cancel_request(doc) and not take_cancel_request(doc)
    before = cancel_path(doc)
    synced(notes)  # a sync tool's marker appears while the turn streams
    clock.now += FRESH_FOR
    assert request_cancel(doc) != before  # `agentdoc cancel` writes where the state is now
    assert take_cancel_request(doc)
