"""Which files the page may show: documents under the watched roots, never anything else.

A path from a URL is taken apart before any file is touched: no empty, `.` or `..` part, no
hidden name (`.agentdoc/`, `.git/`), no backslash or NUL; then the file it names must be the
same file once every symlink is resolved, so a link inside a watched folder that leads out of
it is refused as if it did not exist (the page answers 404, the same as for a missing file).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Root:
    folder: Path  # what the page's paths are relative to
    only: Path | None = None  # a single watched file: the one file shown under `folder`


@dataclass(frozen=True)
class Place:
    root: int  # which watched root, by its position on the command line
    rel: str  # the path below it, with `/` (what the page shows and links)
    path: Path


def roots_of(paths: list[Path]) -> list[Root]:
    found = []
    for given in paths:
        path = Path(os.path.abspath(given))
        found.append(Root(path.parent, path) if path.is_file() else Root(path))
    return found


def place_of(roots: list[Root], path: Path) -> Place | None:
    """Where a document the daemon follows sits, for the list's links."""
    absolute = Path(os.path.abspath(path))
    for index, root in enumerate(roots):
        if root.only is not None and absolute != root.only:
            continue
        try:
            rel = absolute.relative_to(root.folder)
        except ValueError:
            continue
        return Place(index, rel.as_posix(), absolute)
    return None


def safe_parts(rel: str) -> tuple[str, ...] | None:
    """The parts of a relative URL path, or None when any could lead elsewhere."""
    if not rel or "\\" in rel or "\x00" in rel or rel.startswith("/"):
        return None
    parts = tuple(rel.split("/"))
    if any(not p or p in (".", "..") or p.startswith(".") for p in parts):
        return None
    return parts


def find(roots: list[Root], root: int, rel: str) -> Path | None:
    """The markdown file `rel` names under root `root`, or None (missing, outside, a link)."""
    parts = safe_parts(rel)
    if parts is None or not 0 <= root < len(roots) or not parts[-1].endswith(".md"):
        return None
    base = roots[root]
    path = base.folder.joinpath(*parts)
    if base.only is not None and path not in (base.only, _sidecar_of(base.only)):
        return None
    real_base = os.path.realpath(base.folder)
    if os.path.realpath(path) != os.path.join(real_base, *parts):
        return None  # a symlink somewhere on the way: it could point anywhere
    return path if path.is_file() else None


def _sidecar_of(document: Path) -> Path:
    return document.with_name(document.stem + ".thinking.md")
