"""Which folders a sync tool keeps in step with other machines (agentdoc.daemon.synced.pace)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.config import Settings
from agentdoc.daemon.synced.pace import SyncedFolder, is_sync_journal, synced_folder, synced_root

PLAIN = Settings()


@pytest.mark.parametrize(
    ("marker", "is_dir", "tool"),
    [
        (".stfolder", True, "syncthing"),
        (".stfolder", False, "syncthing"),  # older Syncthing releases made it a file
        (".dropbox.cache", True, "dropbox"),
        (".dropbox", False, "dropbox"),
        (".sync_3f2a9c.db", False, "nextcloud"),
        ("._sync_3f2a9c.db", False, "nextcloud"),
    ],
)
def test_a_marker_at_or_above_a_folder_makes_it_synced(
    tmp_path: Path, marker: str, is_dir: bool, tool: str
) -> None:
    root = tmp_path / "share"
    deep = root / "notes" / "work"
    deep.mkdir(parents=True)
    (root / marker).mkdir() if is_dir else (root / marker).write_text("")
    doc = deep / "chat.md"
    doc.write_text("# chat\n")
    for path in (root, deep, doc):
        assert synced_folder(path, PLAIN, home=tmp_path / "home") == SyncedFolder(root, tool)


def test_a_folder_without_a_marker_is_not_synced(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "sync_notes.db").write_text("")  # not a client journal's name
    assert synced_root(tmp_path / "notes", PLAIN, home=tmp_path / "home") is None


def test_the_nearest_marker_names_the_root(tmp_path: Path) -> None:
    (tmp_path / ".dropbox.cache").mkdir()
    inner = tmp_path / "phone"
    (inner / ".stfolder").mkdir(parents=True)
    assert synced_folder(inner, PLAIN, home=tmp_path / "home") == SyncedFolder(inner, "syncthing")


@pytest.mark.parametrize(
    ("base", "tool"),
    [(("Library", "CloudStorage"), "cloudstorage"), (("Library", "Mobile Documents"), "icloud")],
)
def test_a_path_under_the_home_cloud_storage_is_synced(
    tmp_path: Path, base: tuple[str, ...], tool: str
) -> None:
    home = tmp_path / "home"
    provider = home.joinpath(*base, "GoogleDrive-me@example.com")
    notes = provider / "notes"
    notes.mkdir(parents=True)
    assert synced_folder(notes, PLAIN, home=home) == SyncedFolder(provider, tool)
    assert synced_root(home.joinpath(*base), PLAIN, home=home) is None


def test_the_config_lists_synced_folders_deepest_first(tmp_path: Path) -> None:
    outer, inner = tmp_path / "a", tmp_path / "a" / "b"
    (inner / "c").mkdir(parents=True)
    settings = Settings(synced=(str(outer), str(inner)))
    assert synced_folder(inner / "c", settings, home=tmp_path) == SyncedFolder(inner, None)
    assert synced_root(outer, settings, home=tmp_path) == outer
    assert synced_root(tmp_path, settings, home=tmp_path) is None


def test_a_marker_names_the_tool_even_in_a_configured_folder(tmp_path: Path) -> None:
    (tmp_path / ".stfolder").mkdir()
    settings = Settings(synced=(str(tmp_path),))
    assert synced_folder(tmp_path, settings, home=tmp_path / "h") == SyncedFolder(
        tmp_path, "syncthing"
    )


def test_a_symlinked_folder_counts_where_its_files_are(tmp_path: Path) -> None:
    real = tmp_path / "share"
    (real / ".stfolder").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    assert synced_root(link, PLAIN, home=tmp_path / "h") == real


@pytest.mark.parametrize(
    ("name", "journal"),
    [
        (".sync_abc.db", True),
        ("._sync_abc.db", True),
        (".sync_abc.db-wal", False),
        ("sync_abc.db", False),
        (".sync_abc.md", False),
    ],
)
def test_journal_names(name: str, journal: bool) -> None:
    assert is_sync_journal(name) is journal


def test_a_file_given_an_old_mtime_still_tells_when_it_arrived(tmp_path: Path) -> None:
    import os
    import time

    from agentdoc.daemon.watch.tree import changed_ns

    before = time.time_ns() - 1_000_000_000  # the margin of a coarse file-system clock
    path = tmp_path / "chat.md"
    path.write_text("# from the phone\n")
    os.utime(path, (1_000_000, 1_000_000))  # what a sync tool does: the sender's mtime
    assert path.stat().st_mtime_ns < before <= changed_ns(path)
    assert changed_ns(tmp_path / "gone.md") == 0
