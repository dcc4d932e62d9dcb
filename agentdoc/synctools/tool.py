"""What agentdoc knows of one sync tool, as data: the record every tool's module fills in.

A sync tool touches agentdoc in three places, and each reads this record through the one table
(`agentdoc.synctools.table`), never a list of its own: how a synced folder is found
(`agentdoc.syncmarks`: a marker in its root, a journal file, a folder under the home folder),
the files it leaves beside a document that are never documents (`agentdoc.document.byproducts`:
conflict copies, its own folders, temporaries and placeholders), and how agentdoc's own state is
kept out of its sync (`agentdoc init-sync`: an ignore file and its lines, or where the lines go,
or what to do by hand).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What a file a sync tool (or an office program) leaves beside a document is.
Kind = Literal["conflict", "temporary", "lock", "placeholder"]


@dataclass(frozen=True)
class SyncTool:
    name: str  # as `init-sync --tool` takes it and a synced folder's tool is reported
    title: str  # as agentdoc's messages name it
    # How a folder it syncs is found (the first found at or above a document is its root):
    markers: tuple[str, ...] = ()  # a name directly in the synced root (file or folder)
    journals: tuple[str, ...] = ()  # a `PREFIX*.db` journal file in the synced root
    home_storage: tuple[str, ...] = ()  # the folder under home whose sub-folders it syncs
    # A name that tells `init-sync` the tool when no synced folder holds the path (git's
    # `.git`: a repository is not a synced folder, its writes are not paced).
    init_marker: str | None = None
    # The files it leaves beside a document, never documents themselves:
    byproduct_dirs: tuple[str, ...] = ()  # folders holding only its own files
    # Conflict copies: regular expressions matching the whole name, keeping the document's
    # name in the groups `stem` and `ext` (dates and device names vary: they match loosely).
    conflicts: tuple[str, ...] = ()
    others: tuple[tuple[str, Kind], ...] = ()  # shell patterns of its other files, and what
    # Keeping agentdoc's state (`.agentdoc/`, the atomic writes' temporaries) out of its sync:
    ignore_file: str | None = None  # the file in the synced root it reads its rules from
    ignore_lines: tuple[str, ...] = ()  # the rules, in its syntax
    afterwards: str | None = None  # what the person does next ({file}: the file written)
    profile: str | None = None  # where `ignore_lines` go when its rules live outside the folder
    by_hand: str | None = None  # no ignore file at all: how to do it by hand

    @property
    def unmarked(self) -> bool:
        """True when nothing in or around a folder tells the tool syncs it: only the config's
        `synced` list makes agentdoc treat the folder as synced."""
        return not (self.markers or self.journals or self.home_storage or self.init_marker)

    @property
    def mark(self) -> str | None:
        """What a person finds in a folder it syncs: its marker, journal or `init_marker`."""
        shown = (*self.markers, *(f"{prefix}*.db" for prefix in self.journals))
        return shown[0] if shown else self.init_marker

    @property
    def init_sync(self) -> bool:
        """True when `init-sync` can do (or say) something for it."""
        return bool(self.ignore_file or self.profile or self.by_hand)
