"""Starting watchdog's observer on the roots, and what a failure to watch one means.

The observer is started first and each folder scheduled after, so a watch that cannot be set
up fails alone and is told by name: a folder that went away while the watch was being set up
is skipped when a watched folder above it still covers the place (told in the log), and is a
clear agentdoc error when it was a root itself. A kernel limit is left to the watcher, which
polls instead (`watchlimit`).
"""

from __future__ import annotations

import errno
import logging
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from agentdoc.daemon.watch.roots import Roots
from agentdoc.daemon.watch.watchlimit import is_limit
from agentdoc.errors import AgentdocError

log = logging.getLogger(__name__)

VANISHED = (errno.ENOENT, errno.ENOTDIR)


def start_observer(
    roots: Roots,
    handler: FileSystemEventHandler,
    event_filter: list[type[FileSystemEvent]] | None = None,
) -> BaseObserver:
    """A started observer with every watch of `roots` scheduled on `handler`. The kernel's
    limits (see `watchlimit.is_limit`) come out as the OSError, for the caller to poll instead;
    any other failure is an AgentdocError that says what went wrong."""
    observer = Observer()  # inotify_init fails here when the instance limit is hit
    try:
        observer.start()
        for folder, recursive in roots.watches():
            _schedule(observer, handler, roots, folder, recursive, event_filter)
    except BaseException as exc:
        observer.stop()  # stops the emitters that did start, and the kernel's reader
        if observer.is_alive():
            observer.join()
        if isinstance(exc, OSError) and not is_limit(exc):
            raise start_error(exc, roots) from exc
        raise
    return observer


def _schedule(
    observer: BaseObserver,
    handler: FileSystemEventHandler,
    roots: Roots,
    folder: Path,
    recursive: bool,
    event_filter: list[type[FileSystemEvent]] | None,
) -> None:
    try:
        observer.schedule(handler, str(folder), recursive=recursive, event_filter=event_filter)
    except OSError as exc:
        if exc.errno not in VANISHED:
            raise
        if not roots.covered(folder):
            raise gone_error(folder) from exc
        # Inside another watched folder, whose recursive watch sees it if it comes back.
        log.warning("%s went away while its watch was being set up; skipped", folder)


def gone_error(folder: Path) -> AgentdocError:
    return AgentdocError(
        f"{folder}: the folder went away while agentdoc was setting up its watch; "
        "nothing is watched there. Check the path and start `agentdoc watch` again"
    )


def start_error(exc: OSError, roots: Roots) -> AgentdocError:
    where = ", ".join(str(p) for p in (*roots.folders, *sorted(roots.files)))
    return AgentdocError(f"cannot watch {where}: {exc.strerror or exc}")
