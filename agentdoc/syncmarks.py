"""Whether a folder is kept in step with other machines by a sync tool, and by which.

A folder is synced when a sync tool's marker sits at or above it, or when the user's config
lists it (`synced = ["PATH", …]`). Only the look-ups of the markers touch the file system;
which marker means which tool is the sync tools' table (`agentdoc.synctools`). Below the
packages, as where agentdoc keeps its own state for a folder (`localstate`) depends on it as
much as the daemon's pacing does.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.synctools import HOME_STORAGE, JOURNALS, MARKERS


@dataclass(frozen=True)
class SyncedFolder:
    """The top of a synced tree and the name of the tool that syncs it (None when only the
    config says so)."""

    root: Path
    tool: str | None


def synced_root(path: Path, settings: Settings, *, home: Path | None = None) -> Path | None:
    """The synced folder that holds `path` (a file or a folder), or None when it is not synced."""
    found = synced_folder(path, settings, home=home)
    return found.root if found else None


def synced_folder(
    path: Path, settings: Settings, *, home: Path | None = None
) -> SyncedFolder | None:
    """Where `path`'s synced tree starts and which tool syncs it; None when nothing syncs it."""
    start = _absolute(path)
    if not start.is_dir():
        start = start.parent
    return (
        _marked(start)
        or _under_home_storage(start, home or Path.home())
        or _configured(start, settings)
    )


def _absolute(path: Path) -> Path:
    # resolve() so a symlinked folder counts by where its files really are, as the tool sees it.
    return Path(os.path.abspath(path.expanduser())).resolve()


def _marked(start: Path) -> SyncedFolder | None:
    for folder in (start, *start.parents):
        tool = marker_in(folder)
        if tool is not None:
            return SyncedFolder(folder, tool)
    return None


# What `marker_in` found in each folder, with the folder's stamp (mtime, inode, device) then:
# a marker comes or goes only with a change of the folder's entries, which moves its mtime. A
# turn asks for its state folder many times, and each look lists every folder above it.
_seen: dict[Path, tuple[tuple[int, int, int], str | None]] = {}
# Kept only for a folder whose mtime was this old when it was listed: an entry added within
# the same tick of the file system's clock as the listing would leave its mtime as it was.
SETTLED_NS = 2_000_000_000


def marker_in(folder: Path) -> str | None:
    """The tool whose marker is directly in `folder`, or None."""
    try:
        info = os.stat(folder)
    except OSError:
        return _look_for_marker(folder)
    stamp = (info.st_mtime_ns, info.st_ino, info.st_dev)
    known = _seen.get(folder)
    if known is not None and known[0] == stamp:
        return known[1]
    found = _look_for_marker(folder)
    if time.time_ns() - info.st_mtime_ns > SETTLED_NS:
        if len(_seen) > 4096:
            _seen.clear()
        _seen[folder] = (stamp, found)
    else:
        _seen.pop(folder, None)
    return found


def _look_for_marker(folder: Path) -> str | None:
    for name, tool in MARKERS:
        if os.path.lexists(folder / name):
            return tool
    try:
        names = os.listdir(folder)
    except OSError:
        return None  # a folder we may not list holds no marker we can rely on
    return next((found for name in names if (found := journal_of(name)) is not None), None)


def journal_of(name: str) -> str | None:
    """The tool whose journal file the name `name` is (Nextcloud's `.sync_<hash>.db`), or None."""
    if not name.endswith(".db"):
        return None
    return next((tool for prefix, tool in JOURNALS if name.startswith(prefix)), None)


def is_sync_journal(name: str) -> bool:
    """True for a sync tool's journal file name (Nextcloud's `.sync_<hash>.db`)."""
    return journal_of(name) is not None


def _under_home_storage(start: Path, home: Path) -> SyncedFolder | None:
    home = _absolute(home)
    for base, tool in HOME_STORAGE:
        top = home.joinpath(*base)
        if start != top and start.is_relative_to(top):
            # The provider's own folder (one below the base) is the sync root.
            provider = start.relative_to(top).parts[0]
            return SyncedFolder(top / provider, tool)
    return None


def _configured(start: Path, settings: Settings) -> SyncedFolder | None:
    # The deepest listed folder wins, so a nested entry names its own root.
    listed = sorted((_absolute(Path(p)) for p in settings.synced), key=lambda p: len(p.parts))
    for root in reversed(listed):
        if start == root or start.is_relative_to(root):
            return SyncedFolder(root, None)
    return None
