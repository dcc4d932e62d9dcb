"""Decide when a file has gone quiet after a save, and read it once it is whole.

Editors rarely save in one filesystem operation: a rename-style save deletes, renames and creates;
an autosave writes every few tens of milliseconds. `Settler` turns each burst of events for a
path into one "ready" moment (a quiet `step`, capped by `max_wait` so a file that never stops
changing is still looked at). `read_stable` then reads a version that was not mid-write.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


class Settler:
    """Per-path debouncing: a path is 'ready' once no event touched it for `step` seconds, or
    once `max_wait` seconds passed since its first unsettled event (whichever comes first)."""

    def __init__(
        self, step: float, max_wait: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if step < 0 or max_wait < 0:
            raise ValueError(f"settle times must not be negative: step={step}, max_wait={max_wait}")
        self._step = step
        self._max_wait = max_wait
        self._clock = clock
        # Insertion order is first-touch order, so paths come out in the order they first moved.
        self._first: dict[Path, float] = {}
        self._last: dict[Path, float] = {}

    def touch(self, path: Path) -> None:
        now = self._clock()
        self._first.setdefault(path, now)
        self._last[path] = now

    def pending(self) -> bool:
        return bool(self._first)

    def ready(self) -> list[Path]:
        """Pop and return the paths that are ready now, in first-touch order."""
        now = self._clock()
        due = [path for path in self._first if self._due_at(path) <= now]
        for path in due:
            del self._first[path]
            del self._last[path]
        return due

    def next_deadline(self) -> float | None:
        """Seconds until the next path may be ready (0 if one is ready now); None if idle."""
        if not self._first:
            return None
        soonest = min(self._due_at(path) for path in self._first)
        return max(0.0, soonest - self._clock())

    def _due_at(self, path: Path) -> float:
        return min(self._last[path] + self._step, self._first[path] + self._max_wait)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_once(path: Path) -> tuple[bytes, bool]:
    """One stat-read-stat pass: the bytes, and whether nothing moved underneath the read.

    Raises FileNotFoundError when the file is (momentarily) absent.
    """
    before = os.stat(path)
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
