"""What the daemon's loop is told, as values: one small frozen event per thing that happened.

The watcher's threads and the turn threads only put events on the loop's queue; the loop alone
decides what each means (`match`) and owns every document's state. A look to take later (git is
busy, a turn's writes are settling) is a deadline the loop keeps, not a timer thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Changed:
    """A settled save (or a deletion) of a file in the tree."""

    path: Path


@dataclass(frozen=True)
class Opened:
    """An editor opened the file (a hint may be due)."""

    path: Path


@dataclass(frozen=True)
class AttribChanged:
    """Its mode changed (`chmod`): a reply owed a close may be closable now."""

    path: Path


@dataclass(frozen=True)
class TurnEnded:
    """A turn thread finished: how, and the failure it told, if any."""

    path: Path
    outcome: str
    failure: str | None = None


@dataclass(frozen=True)
class Recheck:
    """Look at the file again once a turn's own writes have settled, unless another turn has
    begun since (it took whatever prompt there was)."""

    path: Path
    begun: int  # the document's `DocState.begun` when the look was asked for


@dataclass(frozen=True)
class ConflictCopy:
    """A sync tool's conflict copy of a session document appeared: merge it back."""

    path: Path


@dataclass(frozen=True)
class Remote:
    """The document's git remote has something new (`git: sync`): integrate it."""

    path: Path


@dataclass(frozen=True)
class Release:
    """A held prompt may go now (its folder was trusted, the turn budget allows it)."""

    path: Path


@dataclass(frozen=True)
class Unsent:
    """A prompt the first walk found in a file saved as the watch began: say it waits, unless
    that save's event came and was handled meanwhile."""

    path: Path


Event = (
    Changed
    | Opened
    | AttribChanged
    | TurnEnded
    | Recheck
    | ConflictCopy
    | Remote
    | Release
    | Unsent
)


@dataclass
class Deadlines:
    """Events to handle at a later moment, earliest first."""

    _heap: list[tuple[float, int, Event]] = field(default_factory=list)
    _order: itertools.count[int] = field(default_factory=itertools.count)

    def add(self, delay: float, event: Event) -> None:
        heapq.heappush(self._heap, (time.monotonic() + delay, next(self._order), event))

    def due(self) -> list[Event]:
        """The events whose moment has come, taken off the list."""
        now, found = time.monotonic(), []
        while self._heap and self._heap[0][0] <= now:
            found.append(heapq.heappop(self._heap)[2])
        return found

    def wait(self, longest: float) -> float:
        """How long the loop may wait for its queue before the next deadline."""
        if not self._heap:
            return longest
        return max(0.0, min(longest, self._heap[0][0] - time.monotonic()))


class Stop(threading.Event):
    """What stops a daemon. Setting it also wakes the threads that sleep on the daemon's
    queues (`wake_on`), so a loop with nothing to do may sleep long and still stop at once,
    from a signal handler too (each waker only puts on a `queue.SimpleQueue`). A plain
    `threading.Event` stops a daemon as well, noticed within its idle tick."""

    def __init__(self) -> None:
        super().__init__()
        self._wakers: list[Callable[[], None]] = []

    def wake_on(self, waker: Callable[[], None]) -> None:
        self._wakers.append(waker)
        if self.is_set():  # set before the daemon was listening
            waker()

    def set(self) -> None:
        super().set()
        for waker in list(self._wakers):
            waker()
