"""A folder's sync marker is looked for again only when the folder's entries changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentdoc import syncmarks


def _settled(folder: Path) -> None:
    old = time.time() - 60
    os.utime(folder, (old, old))


def test_a_settled_folder_is_listed_once_until_its_entries_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[str] = []
    real = os.listdir

    def listdir(path: str | os.PathLike[str]) -> list[str]:
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", listdir)
    folder = tmp_path / "notes"
    folder.mkdir()
    _settled(folder)
    assert syncmarks.marker_in(folder) is None
    assert syncmarks.marker_in(folder) is None
    assert listed == [str(folder)]
    (folder / ".sync_0123abcd.db").write_bytes(b"")  # Nextcloud's journal: the mtime moves
    assert syncmarks.marker_in(folder) == "nextcloud"


def test_a_marker_made_in_a_folder_just_changed_is_seen(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    assert syncmarks.marker_in(folder) is None
    stamp = folder.stat().st_mtime_ns
    (folder / ".stfolder").mkdir()
    os.utime(folder, ns=(stamp, stamp))  # the same tick of the file system's clock
    assert syncmarks.marker_in(folder) == "syncthing"
