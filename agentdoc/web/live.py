"""A document's writes, carried to the pages that show it.

The daemon's process tells every file it writes (`on_written`: a reply's flush, a status
file) and every settled save the watcher sees; `Hub.tell` runs on that writer's thread and only
checks, in a dict, whether a page follows the document, then wakes that page's stream on the
server's event loop. No page open: one dict lookup per write. Nothing polls.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentdoc.records import state_file


class Hub:
    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pages: dict[str, set[asyncio.Event]] = {}
        # A followed document's status file → the document: the status may live beside it or,
        # in a synced folder, in this machine's own state folder (agentdoc/localstate.py).
        self._status_of: dict[str, str] = {}

    def document_of(self, path: Path) -> str:
        """The document a written file is about (a status file's document), as a dict key."""
        key = os.path.abspath(path)
        return self._status_of.get(key, key)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def tell(self, path: Path) -> None:
        """Any thread: `path` was written."""
        key = self.document_of(path)
        loop = self._loop
        if key in self._pages and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake, key)

    def _wake(self, key: str) -> None:
        for woken in self._pages.get(key, ()):
            woken.set()

    def follow(self, path: Path) -> asyncio.Event:
        """On the loop: an event set whenever `path` (or its status) is written."""
        woken = asyncio.Event()
        key = os.path.abspath(path)
        self._pages.setdefault(key, set()).add(woken)
        self._status_of[os.path.abspath(state_file(path, ".status.json"))] = key
        return woken

    def leave(self, path: Path, woken: asyncio.Event) -> None:
        key = os.path.abspath(path)
        pages = self._pages.get(key)
        if pages is not None:
            pages.discard(woken)
            if not pages:
                del self._pages[key]
                self._status_of = {s: d for s, d in self._status_of.items() if d != key}
