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

from agentdoc.synctools import CONFLICT_PATTERNS, OTHER_BYPRODUCTS, Kind

# Conflict copies: each tool's pattern matches the whole name and keeps the document's name in
# `stem` and `ext` (the sync tools' table, `agentdoc.synctools`).
_CONFLICTS = tuple(re.compile(pattern, re.IGNORECASE) for pattern in CONFLICT_PATTERNS)
# Everything else, matched against the whole name: the tools' temporaries and placeholders,
# then the locks office programs keep beside a file they have open (no sync tool's, but never
# a document either).
_OTHERS: tuple[tuple[str, Kind], ...] = (
    *OTHER_BYPRODUCTS,
    (".~lock.*#", "lock"),  # LibreOffice's lock file
    (".~lock.*", "lock"),
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
