"""What a filesystem event means to the daemon: the paths it touched, whether it completed a
write, and whether it is another program opening a document (see `Watcher`).

watchdog calls the handler on its own thread; it only enqueues, and never raises (an exception
there would kill watchdog's dispatcher thread).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    FileAttribEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileOpenedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)

from agentdoc.daemon.watch.roots import Roots
from agentdoc.document import TEMP_PREFIX, conflict_original, take_own_open

log = logging.getLogger(__name__)

# Opened/closed-without-write events are left out: reading a document must not look like a save.
# Attribute-only changes (chmod, touch) are left to the rescan, which compares mtimes.
WATCHED_EVENTS = frozenset({"created", "modified", "moved", "deleted", "closed"})
# What watchdog passes on: files' events only. A folder's own carry nothing the handler uses
# (watchdog follows new folders without them), and each event costs three threads' hand-offs;
# a streaming reply's own writes make hundreds. The close after a read stays, though nothing
# reads it: without it between them, the kernel merges two opens of a file in a row into one
# event, and an open by the person would be taken for agentdoc's own (`take_own_open`).
EVENT_FILTER = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileDeletedEvent,
    FileClosedEvent,
    FileClosedNoWriteEvent,
    FileOpenedEvent,
    FileAttribEvent,
]


def _path(raw: bytes | str) -> Path:
    return Path(os.fsdecode(raw))


def _event_paths(event: FileSystemEvent) -> list[tuple[Path, bool]]:
    """The paths an event touched, each with whether the event completed a write to it: the
    close of a file opened for writing, or a rename that put a finished file in place."""
    if event.is_directory or event.event_type not in WATCHED_EVENTS:
        return []
    if event.event_type == "moved":
        moved = [(event.src_path, False), (event.dest_path, True)]
        return [(_path(p), done) for p, done in moved if p]
    return [(_path(event.src_path), event.event_type == "closed")] if event.src_path else []


_STATE_PART = os.sep + ".agentdoc" + os.sep  # the state folder beside documents (tree.py)


def _own_scratch(raw: bytes | str) -> bool:
    """Whether `raw` is one of agentdoc's temp files or in its state folder (no document)."""
    path = os.fsdecode(raw)
    return path.rpartition(os.sep)[2].startswith(TEMP_PREFIX) or _STATE_PART in path


def _opened_path(event: FileSystemEvent, kind: str = "opened") -> Path | None:
    if event.is_directory or event.event_type != kind or not event.src_path:
        return None
    return _path(event.src_path)


class EventHandler(FileSystemEventHandler):
    """Enqueues wanted paths; never raises, since that would stop watchdog's dispatcher."""

    def __init__(
        self,
        roots: Roots,
        sink: Callable[[tuple[Path, bool]], None],
        on_open: Callable[[Path], None],
        on_attrib: Callable[[Path], None] = lambda _path: None,
        on_conflict: Callable[[Path], None] = lambda _path: None,
    ) -> None:
        super().__init__()
        self._roots = roots
        self._sink = sink
        self._on_open = on_open
        self._on_attrib = on_attrib
        self._on_conflict = on_conflict

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            # agentdoc's own writes make most events of a streaming turn (a temp file per write,
            # the state files): no document is among them, and they go before a path is made.
            # A temp file renamed over a document is the document's event, kept.
            if event.is_directory or (
                _own_scratch(event.src_path)
                and (event.event_type != "moved" or _own_scratch(event.dest_path))
            ):
                return
            for path, complete in _event_paths(event):
                if self._roots.wants(path):
                    self._sink((path, complete))
                elif conflict_original(path.name) and self._roots.holds(path):
                    # A sync tool's copy is no document, but its text belongs in one (the
                    # daemon waits for it to be quiet: not every platform reports a write's end).
                    self._on_conflict(path)
            opened = _opened_path(event)
            if opened is not None and self._roots.wants(opened) and not take_own_open(opened):
                self._on_open(opened)
            changed = _opened_path(event, "attrib")
            if changed is not None and self._roots.wants(changed):
                self._on_attrib(changed)
        except Exception:
            log.exception("ignoring a filesystem event that could not be handled: %r", event)
