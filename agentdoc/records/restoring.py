"""Putting files back as they were before a run of turns, from the turns' snapshots.

Deciding is pure (`plan`): the turns are taken back newest first, and a file a turn changed
must still be what that turn left (its after-snapshot, or what the newer turns' undo puts back),
otherwise someone changed it since and `undo` refuses, naming it, unless forced. Then `apply`
writes each file's old bytes and mode (or removes a file the turns created).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.document import atomic_write
from agentdoc.errors import AgentdocError
from agentdoc.records.shadow import REPOSITORY, Change, Entry, Shadow, blob_id, is_document
from agentdoc.records.snapshots import FolderRecord


@dataclass
class Plan:
    # (folder, path relative to it) -> the entry to put back (None: remove the file)
    writes: dict[tuple[str, str], Entry | None] = field(default_factory=dict)
    changed_since: list[str] = field(default_factory=list)  # files someone changed after a turn
    unkept: list[tuple[str, str]] = field(default_factory=list)  # changed, with no copy: why

    def refusals(self) -> list[str]:
        said = [f"{p} changed after the turn that wrote it" for p in self.changed_since]
        return said + [f"{p} changed but was not kept ({why})" for p, why in self.unkept]

    @property
    def files(self) -> int:
        return len(self.writes)


Changes = Callable[[str, str], list[Change]]  # the trees' differences, as `Shadow.changes`
Current = Callable[[Path], Entry | None]


def plan(
    turns: Sequence[Sequence[FolderRecord]], changes: Changes, current: Current = blob_id
) -> Plan:
    """What to write to take ``turns`` (oldest first, each fully recorded) back."""
    result = Plan()
    now: dict[tuple[str, str], Entry | None] = {}
    states: dict[Path, set[str]] = {}
    for entries in reversed(turns):
        for entry in entries:
            assert entry.before is not None and entry.after is not None
            _unkept(result, entry)
            for change in changes(entry.before, entry.after):
                key = (entry.folder, change.path)
                if change.after is None and is_document(Path(*key), states):
                    continue  # it left the record on becoming a session document: not a change
                there = now[key] if key in now else current(Path(entry.folder) / change.path)
                if there != change.after and str(Path(*key)) not in result.changed_since:
                    result.changed_since.append(str(Path(*key)))
                now[key] = change.before
    result.writes = now
    return result


def _unkept(result: Plan, entry: FolderRecord) -> None:
    """Files too big to keep that the turn changed (their size or time moved)."""
    for name in sorted(set(entry.skipped_before) | set(entry.skipped_after)):
        was, became = entry.skipped_before.get(name), entry.skipped_after.get(name)
        if was != became and REPOSITORY not in (was, became):
            result.unkept.append((str(Path(entry.folder) / name), "too big to keep a copy of"))


def apply(shadow: Shadow, writes: Mapping[tuple[str, str], Entry | None]) -> None:
    """Put each file back; removals first, so a file can take a removed folder's place.

    Nothing is written when a file's folder now leads elsewhere (a symlink put in its way since):
    undo writes inside the folders it recorded, never through them.
    """
    for folder, name in writes:
        parent = (Path(folder) / name).parent
        if parent.exists() and not parent.resolve().is_relative_to(Path(folder).resolve()):
            raise AgentdocError(
                f"{parent} now leads outside {folder} (a symlink); nothing was restored"
            )
    # Every copy read first: a snapshot that lost one stops the undo before any file changes.
    blobs = shadow.read_blobs([e.blob for e in writes.values() if e is not None])
    ordered = sorted(writes.items(), key=lambda item: item[1] is not None)
    for (folder, name), entry in ordered:
        path = Path(folder) / name
        if entry is None:
            _remove(path)
            _prune_empty(path.parent, Path(folder))
        else:
            _write(path, blobs[entry.blob], entry.mode)


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _prune_empty(folder: Path, root: Path) -> None:
    """Folders the turns made for the files they created go with them: those left empty (git
    keeps no folders, so one that was empty before the turns goes too, a lesser harm than
    leaving the turns' folders behind)."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:  # not empty (or not ours to remove): the folders above are not either
            return
        folder = folder.parent


def _write(path: Path, data: bytes, mode: str) -> None:
    if path.is_symlink() or (path.exists() and not path.is_file()):
        _clear(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        os.symlink(os.fsdecode(data), path)
        return
    atomic_write(path, data)
    bits = path.stat().st_mode
    exe = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
    if mode == "100755":
        readable = bits & (stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        path.chmod(bits | (readable >> 2))  # execute where it may be read, as git does
    else:
        path.chmod(bits & ~exe)


def _clear(path: Path) -> None:
    """A folder the turns made where the file was: empty once their files are removed."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    else:
        path.unlink()
