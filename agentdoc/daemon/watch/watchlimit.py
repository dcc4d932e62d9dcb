"""What inotify is asked to watch, and its limits: a queue that overflowed, running out of
watches or instances.

watchdog raises when the top folder of a watch cannot be watched, but it skips a folder below
it that cannot (at start, or created later) without a word: saves there would never be seen.
So every refusal of a watch for lack of watches or instances is counted here (the count is
compared, as the overflow count is, by each watcher), and the watcher polls instead of missing
changes. The messages name the sysctl that lifts the limit.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from typing import Any

LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE})

OVERFLOW_LOGGER = "watchdog.observers.inotify_c"


class _OverflowCounter(logging.Handler):
    """Counts the kernel's "events were lost" reports.

    watchdog rebuilds its own watches after an inotify queue overflow but tells handlers
    nothing; its only report is this log record. Each watcher compares the count with the one
    its last full walk saw, and walks again when it moved.
    """

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.count += 1


OVERFLOWS = _OverflowCounter()
_overflow_log = logging.getLogger(OVERFLOW_LOGGER)
_overflow_log.addHandler(OVERFLOWS)
if _overflow_log.level == logging.NOTSET:
    # The report must reach the counter even when the application logs only errors.
    _overflow_log.setLevel(logging.WARNING)


class Refusals:
    """How many watches inotify refused for lack of watches or instances, and the last reason."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.last = errno.ENOSPC

    def note(self, code: int) -> None:
        with self._lock:
            self.count += 1
            self.last = code


REFUSALS = Refusals()


def is_limit(exc: OSError) -> bool:
    return exc.errno in LIMIT_ERRNOS


def polling_reason(code: int) -> str:
    """Why the daemon polls, and how to make it watch again (one line, for the log and status)."""
    if code == errno.EMFILE:
        limit, what, value = "fs.inotify.max_user_instances", "instance", 512
    else:
        limit, what, value = "fs.inotify.max_user_watches", "watch", 524288
    return (
        f"the inotify {what} limit is reached, so saves are noticed by polling (within about "
        f"2 s) instead of at once; raise it with `sudo sysctl {limit}={value}` (add "
        f"`{limit}={value}` to /etc/sysctl.d/90-inotify.conf to keep it) and restart "
        "agentdoc watch"
    )


class Unwatched:
    """Folders below a watched root that get no watch: agentdoc's own state (`.agentdoc/`) and
    other tools' (`.git/`, a sync tool's versions). Nothing reads their events, yet each costs
    three threads' hand-offs (a streaming reply writes its status and journal there), and each
    of their folders a watch (a repository has hundreds)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._below: dict[bytes, frozenset[bytes]] = {}

    def add(self, root: str, names: frozenset[str]) -> None:
        with self._lock:
            self._below[os.fsencode(root).rstrip(b"/") + b"/"] = frozenset(map(os.fsencode, names))

    def remove(self, root: str) -> None:
        with self._lock:
            self._below.pop(os.fsencode(root).rstrip(b"/") + b"/", None)

    def skips(self, path: bytes) -> bool:
        with self._lock:
            below = list(self._below.items())
        for root, names in below:
            if path.startswith(root) and not names.isdisjoint(path[len(root) :].split(b"/")):
                return True
        return False


UNWATCHED = Unwatched()


def _count_refusals() -> None:
    # watchdog's own entry point for adding a watch: every watch of every folder, at start and
    # for folders created later, goes through it, whether watchdog then raises or skips.
    try:
        from watchdog.observers.inotify_c import InotifyFD
    except Exception:  # no inotify on this platform: nothing to count
        return
    original = InotifyFD.add_callback
    if getattr(original, "counts_refusals", False):
        return

    def add_callback(self: InotifyFD, path: bytes, *args: Any, **kwargs: Any) -> Any:
        if UNWATCHED.skips(path):
            # Below the watched folder, so watchdog skips it as one that vanished meanwhile.
            raise OSError(errno.ENOENT, "not watched", os.fsdecode(path))
        try:
            return original(self, path, *args, **kwargs)
        except OSError as exc:
            if is_limit(exc):
                REFUSALS.note(exc.errno or errno.ENOSPC)
            raise

    add_callback.counts_refusals = True  # type: ignore[attr-defined]
    InotifyFD.add_callback = add_callback  # type: ignore[method-assign]


_count_refusals()
