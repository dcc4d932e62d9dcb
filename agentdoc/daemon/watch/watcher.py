"""Turn filesystem activity under the watched roots into one settled path per logical save.

A watchdog observer feeds a queue (its handler only enqueues and never raises: an exception
there would kill watchdog's dispatcher thread). `Watcher.changes` drains the queue into a
`Settler` and yields each markdown path once its burst of events has gone quiet. A periodic
stat rescan catches changes the kernel dropped (inotify queue overflow, network filesystems).
Deleted paths are yielded too; the consumer checks whether the file still exists.

Single files are watched through their folder, because Vim, Emacs and JetBrains save by
replacing the file, and a watch on the old inode would go silent after the first save.

With inotify, the kernel says when a save is over: a close after writing, or a rename that lands
a finished file under the document's name. Those events settle a path after a short guard
instead of the quiet window (see `Settler`). Polling, and other platforms' observers, only see
that something changed, so they keep the quiet window. An open of a document by another process
is passed to `on_open` (a hint that the person is about to write a prompt); agentdoc's own reads
are told apart by `ownopens.take_own_open`. An attribute change (`chmod`) is passed to `on_attrib`
and never settled as a save: it writes no content, and a document made writable again may be
owed the close of a reply that could not be written.

Out of inotify watches or instances (at start, or for a folder made later), the watcher polls
the whole tree instead of missing saves, and tells `on_polling` why (see `watchlimit`).
"""

from __future__ import annotations

import errno
import logging
import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from watchdog.observers.api import BaseObserver

from agentdoc.daemon.watch.fsevents import EVENT_FILTER, EventHandler
from agentdoc.daemon.watch.observing import gone_error, start_observer
from agentdoc.daemon.watch.roots import Roots, changed_paths, nowhere, plan_roots, scan
from agentdoc.daemon.watch.settle import Settler
from agentdoc.daemon.watch.tree import IGNORED_DIRS, Glance, TreeIndex, build, stamp_of
from agentdoc.daemon.watch.watchlimit import (
    OVERFLOWS,
    REFUSALS,
    UNWATCHED,
    polling_reason,
)
from agentdoc.document import conflict_original
from agentdoc.errors import AgentdocError

log = logging.getLogger(__name__)

# watchdog's inotify backend registers a folder created inside a watched tree twice when its
# parent is created in the same instant (`mkdir -p a/b`: once while walking `a`, once for `b`'s
# own create event) and warns that the second registration replaces the first. It replaces it
# with the same callback, so the warning carries nothing for a user to act on.
DOUBLE_WATCH_WARNING = r"Callback with id .* already exists for watch"
warnings.filterwarnings("ignore", message=DOUBLE_WATCH_WARNING, category=RuntimeWarning)

# The longest wait on the queue when nothing is due (settling, a rescan): a stop wakes the wait
# (`wake`), so an idle watch need not look at it twenty times a second.
TICK = 1.0

# Seconds the watch waits for start-up's glance at the notes before it begins anyway: a 10,000
# note vault takes a fifth of that.
GLANCE_WAIT = 1.0

# A rescan that finds nothing doubles the wait before the next one, up to this many times the
# configured interval; any activity brings it back to the interval.
BACKOFF_LIMIT = 8
# Polling looks at folders' mtimes and followed files every `poll_interval`, up to this many
# times that while nothing changes, and at every indexed markdown file once per SWEEP_POLLS
# intervals (a plain note rewritten in place, which no folder's mtime shows).
POLL_BACKOFF_LIMIT = 2
SWEEP_POLLS = 10


def completions_trusted(poll: bool) -> bool:
    """Whether the observer reports the end of a write: inotify does; polling, FSEvents,
    kqueue and ReadDirectoryChangesW report only that something changed."""
    return not poll and sys.platform.startswith("linux")


class Watcher:
    """Watches folders (recursively) and single files (by watching their parent folder, because
    Vim/Emacs/JetBrains saves replace the file and a per-file watch would be lost), and yields
    settled markdown paths."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        step: float,
        max_wait: float,
        poll: bool = False,
        rescan_interval: float = 2.0,
        poll_interval: float = 1.0,
        guard: float | None = None,
        on_open: Callable[[Path], None] = lambda _path: None,
        on_attrib: Callable[[Path], None] = lambda _path: None,
        on_conflict: Callable[[Path], None] = lambda _path: None,
        on_polling: Callable[[str], None] = lambda _reason: None,
    ) -> None:
        """`rescan_interval` <= 0 turns the rescan off; `poll_interval` paces polling. `guard`
        (seconds) settles a save the kernel reports complete; None waits for quiet always.
        `on_open`, `on_attrib` and `on_conflict` (a sync tool's conflict copy written) are
        called on watchdog's thread: they must be quick and must not raise. `on_polling` is
        told once why the watcher polls when inotify is out of watches or instances."""
        self._roots = plan_roots(roots)
        trusted = guard is not None and completions_trusted(poll)
        self._settler = Settler(step, max_wait, guard=guard if trusted else None)
        self._poll = poll
        self._poll_interval = poll_interval
        self._rescan_interval = rescan_interval
        self._on_open = on_open
        self._on_attrib = on_attrib
        self._on_conflict = on_conflict
        self._on_polling = on_polling
        self.polling: str | None = None  # why it polls though not asked to
        self._refusals = REFUSALS.count
        # None: a wake (`wake`), no path.
        self._queue: queue.SimpleQueue[tuple[Path, bool] | None] = queue.SimpleQueue()
        self._index: TreeIndex | None = None  # None until the first walk is done
        self._to_follow: set[Path] = set()  # asked for while the first walk went on
        self._overflows = OVERFLOWS.count
        self._observer: BaseObserver | None = None
        self._lock = threading.Lock()  # guards _observer and _index
        self._started = False
        self.walked = threading.Event()
        self.glanced = Glance()  # the notes start-up need not read again (filled by `start`)
        self.observed_ns = 0  # when the observer began (set by `start`)
        self.failure: AgentdocError | None = None  # the watch itself cannot go on

    @property
    def roots(self) -> Roots:
        return self._roots

    def start(
        self,
        found: Callable[[Path], None] | None = None,
        *,
        background: bool = False,
        on_walked: Callable[[], None] = lambda: None,
    ) -> None:
        """Glance at the notes (`glanced`), start observing, then walk the roots once: the
        baseline of the rescan, with `found` called for each markdown file. With `background`,
        the walk runs on a thread and this returns as soon as events are observed; `walked` is
        set when it is done, and `on_walked` called. A second call does nothing."""
        with self._lock:
            if self._started:
                return
            self._started = True
        if not self._poll:
            self._glance()
        self.observed_ns = time.time_ns()  # what changes from here on is observed
        with self._lock:
            # Polling is the index's own rescan (see `changes`): watchdog's polling observer
            # would stat every file of the tree, `.git/` included, every interval.
            self._observer = None if self._poll else self._start_observer()
            self._overflows = OVERFLOWS.count
        if self.polling is not None:
            self._on_polling(self.polling)
        report = found or nowhere
        if not background:
            self._walk(report, on_walked)
            return
        walker = threading.Thread(
            target=self._walk, args=(report, on_walked), name="agentdoc-walk", daemon=True
        )
        walker.start()

    def _glance(self) -> None:
        """Glance at the notes before observing, which would report each read (see `Glance`):
        for GLANCE_WAIT at most, as a slow folder (a network mount) must not keep the watch
        from beginning; the glance then goes on beside it."""
        glancing = threading.Thread(
            target=self.glanced.take,
            args=(self._roots.folders, self._roots.files),
            name="agentdoc-glance",
            daemon=True,
        )
        glancing.start()
        glancing.join(GLANCE_WAIT)

    def _walk(self, found: Callable[[Path], None], on_walked: Callable[[], None]) -> None:
        try:
            index = build(self._roots.folders, self._roots.files, found)
        except Exception as exc:  # on its own thread: told through `changes`, not lost
            log.exception("the first walk of %s failed", self._roots)
            self.failure = AgentdocError(f"the first walk of the watched tree failed: {exc}")
            return
        if (lost := self._lost_root(index)) is not None:
            self.failure = lost
            return
        with self._lock:
            for path in self._to_follow:
                index.follow(path, stamp_of(path))
            self._index = index
        self.walked.set()
        on_walked()
        for copy in index.orphan_copies():
            self._on_conflict(copy)  # made while no daemon watched: the document is rebuilt
        log.debug("indexed %d folders under %s", len(index.folders), self._roots)

    def _lost_root(self, index: TreeIndex) -> AgentdocError | None:
        """A root the walk found gone: an error, unless another root still holds it."""
        for top in self._roots.folders:
            if str(top) in index.folders or top.is_dir():
                continue
            if not self._roots.covered(top):
                return gone_error(top)  # nothing is left to serve there
            log.warning("%s went away while the tree was being walked; skipped", top)
        return None

    def _start_observer(self) -> BaseObserver | None:
        self._refusals = REFUSALS.count
        handler = EventHandler(
            self._roots, self._queue.put, self._on_open, self._on_attrib, self._on_conflict
        )
        for folder in self._roots.folders:
            UNWATCHED.add(str(folder), IGNORED_DIRS)
        try:
            observer = start_observer(self._roots, handler, EVENT_FILTER)
        except OSError as exc:  # the kernel's limits: every other failure is told by name
            self._poll_instead(None, exc.errno or errno.ENOSPC)
            return None
        if REFUSALS.count != self._refusals:  # a folder below a root could not be watched
            self._poll_instead(observer, REFUSALS.last)
            return None
        log.debug("watching %s", self._roots)
        return observer

    def _poll_instead(self, observer: BaseObserver | None, code: int) -> None:
        """Stop what was watched and poll the whole tree: out of watches or instances (`code`,
        the errno), the daemon would otherwise miss saves."""
        if observer is not None:
            observer.stop()  # stops the emitters that did start
        self._poll = True
        self.polling = polling_reason(code)

    def _check_limits(self) -> bool:
        """Poll from now on if a folder created since the start could not be watched; True
        if this call switched to polling (called on the consumer's thread)."""
        if self._poll or REFUSALS.count == self._refusals:
            return False
        with self._lock:
            observer, self._observer = self._observer, None
        self._poll_instead(observer, REFUSALS.last)
        if observer is not None:
            observer.join()
        assert self.polling is not None
        self._on_polling(self.polling)
        return True

    def wake(self) -> None:
        """Have `changes` look at its stop event now (safe from any thread, and from a signal
        handler: a `SimpleQueue` put)."""
        self._queue.put(None)

    def stop(self) -> None:
        with self._lock:
            observer, self._observer = self._observer, None
            self._started = False
        if observer is not None:
            observer.stop()
            observer.join()
        for folder in self._roots.folders:
            UNWATCHED.remove(str(folder))

    def known_files(self) -> list[Path]:
        """Markdown files under the roots right now (a whole walk)."""
        return sorted(scan(self._roots))

    def follow(self, path: Path) -> None:
        """Have every rescan look at `path`, which a folder's mtime does not show rewritten in
        place (the consumer's session documents). Safe to call from any thread."""
        with self._lock:
            if self._index is None:
                self._to_follow.add(path)
            elif path not in self._index.close:
                self._index.follow(path, stamp_of(path))

    def changes(self, stop: threading.Event) -> Iterator[Path]:
        """Yield each settled path (absolute) once per burst, until `stop` is set.

        Meant for one consumer at a time: the settling state lives in the watcher, so a later
        call picks up where an earlier one stopped.
        """
        base = self._poll_interval if self._poll else self._rescan_interval
        limit = POLL_BACKOFF_LIMIT if self._poll else BACKOFF_LIMIT
        interval = base
        next_rescan = time.monotonic() + interval
        next_sweep = time.monotonic() + self._poll_interval * SWEEP_POLLS
        while not stop.is_set():
            if self.failure is not None:
                raise self.failure
            if self._check_limits():
                base, limit = self._poll_interval, POLL_BACKOFF_LIMIT
                interval, next_rescan = base, time.monotonic()  # look at once
            if self._collect(self._wait_time(next_rescan)):
                interval = base  # activity: look again soon
                next_rescan = min(next_rescan, time.monotonic() + interval)
            if base > 0 and time.monotonic() >= next_rescan:
                found = self._rescan()
                if self._poll and time.monotonic() >= next_sweep:
                    found = self._sweep() or found
                    next_sweep = time.monotonic() + self._poll_interval * SWEEP_POLLS
                interval = base if found else min(interval * 2, base * limit)
                next_rescan = time.monotonic() + interval
            for path in self._settler.ready():
                self._remember(path)
                yield path
                if stop.is_set():
                    return

    def _wait_time(self, next_rescan: float) -> float:
        waits = [TICK]
        deadline = self._settler.next_deadline()
        if deadline is not None:
            waits.append(deadline)
        if self._rescan_interval > 0 or self._poll:
            waits.append(next_rescan - time.monotonic())
        return max(0.0, min(waits))

    def _collect(self, timeout: float) -> bool:
        try:
            item = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        except queue.Empty:
            return False
        touched = False
        while True:
            if item is not None:
                self._settler.touch(item[0], complete=item[1])
                touched = True
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return touched

    def _rescan(self) -> bool:
        """Look for changes the observer did not report; True if there were any."""
        with self._lock:
            index = self._index
        if index is None:
            return False  # the first walk is still going: nothing to compare with yet
        if OVERFLOWS.count != self._overflows:
            self._overflows = OVERFLOWS.count
            return self._rewalk(index)
        with self._lock:
            changed = index.rescan()
        # A path still settling was reported: its events are in hand, and a touch would only
        # hold it back (a reply's last write waited a whole quiet step more, then was looked
        # at as a change nobody had seen).
        missed = [path for path in changed if not self._settler.holds(path)]
        for path in missed:
            log.debug("rescan found a change the observer did not report: %s", path)
            if conflict_original(path.name) is not None:
                self._on_conflict(path)  # a copy to merge back, not a document
            else:
                self._settler.touch(path)
        return bool(missed)

    def _sweep(self) -> bool:
        with self._lock:
            index = self._index
            changed = [] if index is None else index.sweep()
        for path in changed:
            self._settler.touch(path)
        return bool(changed)

    def _rewalk(self, old: TreeIndex) -> bool:
        # The kernel dropped events, so in-place rewrites of any file may be unseen: compare
        # every file, as a whole walk sees them.
        log.warning("events were lost; looking at every file under %s", self._roots)
        fresh = build(self._roots.folders, self._roots.files, nowhere)
        with self._lock:
            fresh.close = old.close
            self._index = fresh
        changed = changed_paths(old.stamps(), fresh.stamps())
        for path in changed:
            self._settler.touch(path)
        return bool(changed)

    def _remember(self, path: Path) -> None:
        # The version being handed out is the baseline for the next rescan, so a change that
        # events already reported is not reported a second time by the rescan; and a file
        # saved once is likely saved again, in place, so every rescan looks at it from now on.
        with self._lock:
            if self._index is not None:
                self._index.follow(path, stamp_of(path))
