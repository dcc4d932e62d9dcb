"""Noticing inotify's limits: a queue that overflowed, and running out of watches or instances.

watchdog raises when the top folder of a watch cannot be watched, but it skips a folder below
it that cannot (at start, or created later) without a word: saves there would never be seen.
So every refusal of a watch for lack of watches or instances is counted here (the count is
compared, as the overflow count is, by each watcher), and the watcher polls instead of missing
changes. The messages name the sysctl that lifts the limit.
"""

from __future__ import annotations

import errno
import logging
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

    def add_callback(self: InotifyFD, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except OSError as exc:
            if is_limit(exc):
                REFUSALS.note(exc.errno or errno.ENOSPC)
            raise

    add_callback.counts_refusals = True  # type: ignore[attr-defined]
    InotifyFD.add_callback = add_callback  # type: ignore[method-assign]


_count_refusals()
