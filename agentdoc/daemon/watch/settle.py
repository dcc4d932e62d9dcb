"""Decide when a file has gone quiet after a save, and read it once it is whole.

Editors rarely save in one filesystem operation: a rename-style save deletes, renames and creates;
an autosave writes every few tens of milliseconds. `Settler` turns each burst of events for a
path into one "ready" moment. Where the kernel says when a write is over (inotify's close-write,
or the rename that lands a finished temp file), the save is complete then: the path is ready
after a short `guard`, which lets an editor that writes twice land its second write. Otherwise
(polling, other platforms, a path saved again within `step` of its last completed save, as an
autosave burst is) the path is ready after a quiet `step`. Either way `max_wait` caps the wait,
so a file that never stops changing is still looked at. `read_stable` then reads a version that
was not mid-write.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from agentdoc.document import note_own_open

log = logging.getLogger(__name__)


class Settler:
    """Per-path debouncing: a path is 'ready' `guard` seconds after an event that completed a
    save (if no other event followed it), else once no event touched it for `step` seconds; and
    at the latest `max_wait` seconds after its first unsettled event."""

    def __init__(
        self,
        step: float,
        max_wait: float,
        clock: Callable[[], float] = time.monotonic,
        *,
        guard: float | None = None,
    ) -> None:
        """`guard` None: completion events are not trusted, every path waits for quiet."""
        if step < 0 or max_wait < 0 or (guard is not None and guard < 0):
            raise ValueError(
                f"settle times must not be negative: step={step}, max_wait={max_wait}, "
                f"guard={guard}"
            )
        self._step = step
        self._max_wait = max_wait
        self._guard = guard
        self._clock = clock
        # Insertion order is first-touch order, so paths come out in the order they first moved.
        self._first: dict[Path, float] = {}
        self._last: dict[Path, float] = {}
        self._complete: dict[Path, float] = {}  # the save's last event said it was over
        self._handed: dict[Path, float] = {}  # when a completed save was last handed out

    def touch(self, path: Path, *, complete: bool = False) -> None:
        """Note an event for `path`; `complete` if it ends a write (close-write, rename-in)."""
        now = self._clock()
        self._first.setdefault(path, now)
        self._last[path] = now
        if complete and self._guard is not None and not self._in_burst(path, now):
            self._complete[path] = now
        else:
            self._complete.pop(path, None)

    def _in_burst(self, path: Path, now: float) -> bool:
        # Saved again soon after a save that was handed out: an autosave burst (or an editor
        # writing twice, slower than the guard), which the quiet window coalesces.
        handed = self._handed.get(path)
        return handed is not None and now - handed < self._step

    def pending(self) -> bool:
        return bool(self._first)

    def holds(self, path: Path) -> bool:
        """Whether `path` has events that have not settled yet."""
        return path in self._first

    def ready(self) -> list[Path]:
        """Pop and return the paths that are ready now, in first-touch order."""
        now = self._clock()
        due = [path for path in self._first if self._due_at(path) <= now]
        for path in due:
            del self._first[path]
            del self._last[path]
            if self._complete.pop(path, None) is not None or self._in_burst(path, now):
                self._handed[path] = now
        self._forget_bursts(now)
        return due

    def _forget_bursts(self, now: float) -> None:
        if len(self._handed) > 64:  # only ever a few paths are being saved at a time
            self._handed = {p: t for p, t in self._handed.items() if now - t < self._step}

    def next_deadline(self) -> float | None:
        """Seconds until the next path may be ready (0 if one is ready now); None if idle."""
        if not self._first:
            return None
        soonest = min(self._due_at(path) for path in self._first)
        return max(0.0, soonest - self._clock())

    def _due_at(self, path: Path) -> float:
        complete = self._complete.get(path)
        quiet = self._step if complete is None or self._guard is None else self._guard
        return min(self._last[path] + quiet, self._first[path] + self._max_wait)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_once(path: Path) -> tuple[bytes, bool]:
    """One stat-read-stat pass: the bytes, and whether nothing moved underneath the read.

    Raises FileNotFoundError when the file is (momentarily) absent.
    """
    before = os.stat(path)
    note_own_open(path)
    data = path.read_bytes()
    after = os.stat(path)
    return data, _identity(before) == _identity(after) and len(data) == after.st_size


def read_stable(path: Path, *, attempts: int = 20, pause: float = 0.02) -> bytes | None:
    """Read `path` once it holds a whole version; None if it stays missing.

    Retries while the file is missing (a rename-style save is between its unlink and its
    create), while its size/mtime/inode changed during the read, or while it is empty (an
    in-place save truncates before it writes). An empty file is returned only if it stays empty
    over all attempts. A file that changes during every attempt is returned as last read: it is
    still being written, so another event for it follows. Errors other than "missing"
    (permissions, a folder) propagate.
    """
    last: bytes | None = None
    for attempt in range(max(1, attempts)):
        if attempt:
            time.sleep(pause)  # a retry back-off, waiting for the writer to finish
        try:
            last, stable = _read_once(path)
        except FileNotFoundError:
            last = None
            continue
        if stable and last:
            return last
        if not stable:
            log.debug("%s changed while being read; retrying", path)
    return last
