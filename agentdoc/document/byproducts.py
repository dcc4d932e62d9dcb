"""The files sync tools leave beside a document: never documents themselves (pure names).

A conflict copy keeps the document's frontmatter and session id, so read as a document it
would be answered as a second copy of the same conversation. Conflict copies, version
folders, transfer temporaries, office locks and cloud placeholders are recognised by name
alone, so they are never run, resumed or written, and a rename of a document to such a name
is not a move of the document. A conflict copy also names the document it belongs to, which
is where its text is merged back.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Literal

Kind = Literal["conflict", "temporary", "lock", "placeholder"]

# Folders that only ever hold a sync tool's own files (old versions, caches, markers).
# (`.sync` is Resilio Sync's; its Archive holds old versions.)
BYPRODUCT_DIRS = frozenset({".stversions", ".stfolder", ".dropbox.cache", ".sync"})

# Conflict copies: a pattern that matches the whole name and keeps the document's name in
# `stem` and `ext`. Dates and device names vary by tool and release, so they match loosely.
_CONFLICTS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # Syncthing: chat.sync-conflict-20261125-123404-ASALHUV.md
        r"(?P<stem>.+?)\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}(?P<ext>\.[^.]*)?",
        # Dropbox, Nextcloud, Obsidian Sync: chat (Ann's conflicted copy 2026-11-25).md,
        # chat (conflicted copy 2026-11-25 123404).md, chat (Conflicted copy ann 2026…) (1).md
        r"(?P<stem>.+?) \([^()]*conflicted copy[^()]*(?:\(\d+\))?\)(?: \(\d+\))?(?P<ext>\.[^.]*)?",
        # ownCloud and older Nextcloud clients: chat_conflict-20261125-123404.md
        r"(?P<stem>.+?)_conflict-\d{8}-\d{6}(?P<ext>\.[^.]*)?",
        # rclone bisync: chat.conflict1.md (extension kept) or chat.md.conflict2
        r"(?P<stem>.+?)\.conflict\d+(?P<ext>\.[^.]*)?",
        r"(?P<stem>.+?)(?P<ext>\.[^.]+)\.conflict\d+",
        # rclone bisync before 1.66: chat.md..path1
        r"(?P<stem>.+?)(?P<ext>\.[^.]+)\.\.path[12]",
    )
)
# Everything else, matched against the whole name.
_OTHERS: tuple[tuple[str, Kind], ...] = (
    (".syncthing.*.tmp", "temporary"),  # Syncthing's download in progress
    ("~syncthing~*.tmp", "temporary"),  # the same on Windows-safe file systems
    (".~lock.*#", "lock"),  # LibreOffice's lock file
    (".~lock.*", "lock"),
    ("*.icloud", "placeholder"),  # iCloud's stand-in for a file not downloaded yet
    ("~$*", "lock"),  # Microsoft Office's owner file
)


def byproduct_kind(name: str) -> Kind | None:
    """What kind of sync by-product the file name `name` is, or None for an ordinary name."""
    if conflict_original(name) is not None:
        return "conflict"
    for pattern, kind in _OTHERS:
        if fnmatch.fnmatchcase(name, pattern):
            return kind
    return None


def is_byproduct(name: str) -> bool:
    """True for a file name a sync tool made, which is never a session document."""
    return byproduct_kind(name) is not None


def conflict_original(name: str) -> str | None:
    """The name of the document a conflict copy `name` was made from, or None."""
    # Asked of every file event's name (agentdoc's own writes among them): most names have
    # neither part that some pattern needs, one look instead of six patterns tried. ("confl",
    # not "conflict": the patterns' ignored case also takes a dotless or dotted capital I.)
    folded = name.lower()
    if "confl" not in folded and "..path" not in folded:
        return None
    for pattern in _CONFLICTS:
        found = pattern.fullmatch(name)
        if found:
            return found["stem"] + (found["ext"] or "")
    return None
