"""What a watch covers: the roots sorted into folders and single files, and what a scan of
them finds (pure, apart from the scan's stats).

Single files are watched through their folder, because Vim, Emacs and JetBrains save by
replacing the file, and a watch on the old inode would go silent after the first save.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentdoc.daemon.watch.tree import IGNORED_DIRS, Stamp, build, wanted_name
from agentdoc.errors import AgentdocError


def is_ignored(path: Path) -> bool:
    """True for anything that can never be a session document: artefacts, sidecars, state."""
    if any(part in IGNORED_DIRS for part in path.parts[:-1]):
        return True
    return not wanted_name(path.name)


def _folder(path: Path) -> Path:
    # Resolved so event paths (built from the watched folder) compare equal to root paths.
    return Path(os.path.abspath(path)).resolve()


def _file(path: Path) -> Path:
    # The folder is resolved, the name is not: a symlinked document keeps the name the user chose.
    absolute = Path(os.path.abspath(path))
    return _folder(absolute.parent) / absolute.name


@dataclass(frozen=True)
class Roots:
    """What to watch: folders recursively, single files through their (non-recursive) folder."""

    folders: tuple[Path, ...]
    files: frozenset[Path]

    def wants(self, path: Path) -> bool:
        if path in self.files:
            return True
        return not is_ignored(path) and any(path.is_relative_to(f) for f in self.folders)

    def holds(self, path: Path) -> bool:
        """True for a file in a watched folder (ignored or not), outside the ignored folders."""
        if any(part in IGNORED_DIRS for part in path.parts[:-1]):
            return False
        parents = {f.parent for f in self.files}
        return path.parent in parents or any(path.is_relative_to(f) for f in self.folders)

    def covered(self, folder: Path) -> bool:
        """Whether another watched folder, still there, holds `folder` (one that went away is
        then a sub-folder gone, not the loss of a whole root)."""
        return any(folder.is_relative_to(f) and f.is_dir() for f in self.folders if f != folder)

    def watches(self) -> list[tuple[Path, bool]]:
        """(folder, recursive) pairs to schedule."""
        parents = sorted({f.parent for f in self.files} - set(self.folders))
        return [(f, True) for f in self.folders] + [(p, False) for p in parents]


def plan_roots(roots: Sequence[Path]) -> Roots:
    """Sort roots into folders and files; a root that is not there (and cannot appear) fails."""
    folders: list[Path] = []
    files: set[Path] = set()
    for root in roots:
        if root.is_dir():
            folders.append(_folder(root))
        elif root.exists() or Path(os.path.abspath(root)).parent.is_dir():
            # A file that does not exist yet is fine: its creation is the first event.
            files.add(_file(root))
        else:
            raise AgentdocError(f"{root}: no such file or folder to watch")
    return Roots(tuple(dict.fromkeys(folders)), frozenset(files))


def scan(roots: Roots) -> dict[Path, Stamp]:
    """The markdown files under the roots right now, with what identifies their version."""
    return build(roots.folders, roots.files, nowhere).stamps()


def changed_paths(old: dict[Path, Stamp], new: dict[Path, Stamp]) -> list[Path]:
    """Paths that appeared, vanished or whose stamp differs between two scans."""
    gone = [path for path in old if path not in new]
    return [path for path, s in new.items() if old.get(path) != s] + gone


def nowhere(_path: Path) -> None:
    pass
