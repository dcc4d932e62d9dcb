"""The watch daemon: settled saves in, turns out, one turn in flight per document.

The main loop owns all scheduling state and is fed by a queue of small frozen events
(`events.py`): settled saves from the watcher, the end of a turn from its thread, and the looks
it put off itself as deadlines. A save is a prompt only if its content is
new (not a hash we have seen or written ourselves), the file is a session document, and it holds
a submitted prompt. A prompt saved while the document's turn streams is queued and sent when the
turn ends. Faults stay local: whatever goes wrong with one document is logged, written to its
status file, and the loop goes on serving the others.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from agentdoc.config import Settings, load_settings
from agentdoc.daemon.acting import Actions
from agentdoc.daemon.events import (
    AttribChanged,
    Changed,
    ConflictCopy,
    Deadlines,
    Event,
    Opened,
    Recheck,
    Release,
    Remote,
    Stop,
    TurnEnded,
    Unsent,
)
from agentdoc.daemon.gate import Gate, gate_for
from agentdoc.daemon.hints import Hints
from agentdoc.daemon.lock import TreeLock
from agentdoc.daemon.notices import (
    tell_agent_problems,
    tell_fault,
)
from agentdoc.daemon.notify import Notifier
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.reconfig import (
    ConfigWatch,
    Reread,
    needing_restart,
    refusal_note,
    restart_note,
)
from agentdoc.daemon.repair import Repairs
from agentdoc.daemon.saves import Saves
from agentdoc.daemon.startup import Discovery, take
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.synced.gitpoll import start_polling
from agentdoc.daemon.synced.pace import synced_root
from agentdoc.daemon.syncing import Syncing
from agentdoc.daemon.turns import Turns, stop_turns
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.watcher import Watcher
from agentdoc.document import (
    WriteLedger,
)
from agentdoc.errors import AgentdocError
from agentdoc.localstate import move_out
from agentdoc.records import marked
from agentdoc.search import note_changed, stop_indexing
from agentdoc.turn import Progress

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0
FRESH_MARGIN_NS = 1_000_000_000
DISCOVERY_BATCH = 64  # files looked at between two checks for a waiting save
CONFIG_LOOK_EVERY = 1.0  # seconds between looks at the config file's stamp
# The longest the loop sleeps on its queue. Events and deadlines wake it at once; these bound
# only its chores (start-up discovery, owed repairs, held prompts, idle warm agents, the
# config). A woken thread costs tens of microseconds, so a daemon with nothing to do stays
# asleep: ten wake-ups a second were a tenth of a streaming turn's CPU.
BUSY_TICK = 0.1  # while start-up discovers the tree or a repair is owed
IDLE_TICK = 1.0


def _load(path: Path) -> Settings:
    return load_settings(path=path)


@dataclass
class Daemon:
    roots: Sequence[Path]
    settings: Settings
    send_pending: bool = False
    poll: bool = False
    max_concurrent: int | None = None  # None: the setting `max_concurrent_turns`
    environ: Mapping[str, str] | None = None
    on_progress: Callable[[Progress], None] = lambda _p: None
    ledger: WriteLedger = field(default_factory=WriteLedger)
    rescan_interval: float = 2.0
    retry_interval: float = 5.0  # seconds between attempts to close a reply owed a close
    # The synced folder a document is in, if any: its prompts wait for `agentdoc trust`.
    synced_root: Callable[[Path], Path | None] | None = None  # default: markers and config
    machine: str | None = None  # this machine's id (default: the one in local state)
    # Told each settled change the watcher reports (an editor's save), on the watcher's thread:
    # the web page's live view follows saves made elsewhere through it.
    on_change: Callable[[Path], None] = lambda _p: None
    # The user's config file, read again whenever it is saved (None: the settings stay).
    config: Path | None = None
    _docs: dict[Path, DocState] = field(default_factory=dict, init=False)
    # None wakes the loop (a `Stop` set): nothing to handle, only `stop` to look at.
    _events: queue.SimpleQueue[Event | None] = field(default_factory=queue.SimpleQueue, init=False)
    _deadlines: Deadlines = field(default_factory=Deadlines, init=False)
    _found: queue.SimpleQueue[Path] = field(default_factory=queue.SimpleQueue, init=False)
    _watcher: Watcher | None = field(default=None, init=False)
    # Set once saves are observed; `discovered` once the first walk of the tree, with the
    # recovery of replies a crash left open, is done as well.
    ready: threading.Event = field(default_factory=threading.Event, init=False)
    discovered: threading.Event = field(default_factory=threading.Event, init=False)
    pool: WarmPool | None = field(default=None, init=False)
    repairs: Repairs = field(init=False)
    hints: Hints = field(init=False)
    gate: Gate = field(init=False)
    notifier: Notifier = field(init=False)
    loop: Loop = field(init=False)  # what the parts below share
    actions: Actions = field(init=False)
    syncing: Syncing = field(init=False)
    turns: Turns = field(init=False)
    discovery: Discovery = field(init=False)
    saves: Saves = field(init=False)

    def __post_init__(self) -> None:
        # Agents started ahead of a turn (warm ones) carry the marker recovery knows them by.
        self.environ = marked(self.environ)
        self.repairs = Repairs(self.ledger, self.retry_interval)
        self.gate = gate_for(self.settings, self.synced_root or self._synced, self.machine)
        self.notifier = Notifier(self.settings.notify, self.environ)
        self.on_progress = self.notifier.wrap(self.on_progress)
        if self.settings.warm_sessions > 0:
            self.pool = WarmPool(self.settings.warm_sessions, self.settings.warm_idle)
        self.hints = Hints(self.pool, self.settings, self.environ, self.gate.ahead)
        self.loop = Loop(
            self._docs,
            self.settings,
            self.ledger,
            self.repairs,
            self.gate,
            self._deadlines,
            self._events.put,
            self.on_progress,
        )
        limit = self.max_concurrent or self.settings.max_concurrent_turns
        self.turns = Turns(self.loop, self.environ, self.pool, limit)
        self.actions = Actions(self.loop, self.turns, self.hints)
        self.syncing = self.actions.syncing = Syncing(self.loop, self.actions.act)
        # Indexed once acted on (see `Actions.act`).
        self.saves = Saves(self.loop, self.actions.act, partial(self._follow, index=False))
        self.discovery = Discovery(
            self.loop,
            self.hints,
            self._follow,
            self.actions.act,
            self.poll,
            self.send_pending,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        lock = TreeLock(self.roots)
        lock.acquire()
        self.discovery.locked_ns = time.time_ns()  # `agentdoc ask` finds the daemon from here
        for root in self.roots:
            # Before anything reads a status or journal: in a synced folder they live out of
            # the tree now, and one an older agentdoc left in it is moved there first.
            for told in move_out(root.absolute()):
                log.warning("%s", told)
        watcher = self._watch(lock)
        try:
            # Saves are observed from here on; the first walk of the tree (which may hold a
            # great many notes) goes on behind, feeding start-up discovery as it finds files.
            watcher.start(self._discover, background=True, on_walked=self._wake)
            self.discovery.observed_ns = watcher.observed_ns
            self.discovery.plain = watcher.glanced.still_plain
            feeder = threading.Thread(target=self._feed, args=(watcher, stop), daemon=True)
            feeder.start()
            if isinstance(stop, Stop):
                stop.wake_on(self._wake)
                stop.wake_on(watcher.wake)
            remote = partial(self._put, Remote)
            start_polling(self.syncing.conversations, lambda: self.settings, remote, stop)
            self.ready.set()
            log.info("watching %s", ", ".join(str(r) for r in self.roots))
            tell_agent_problems(self.settings, self.environ)
            started = self.settings
            config = (
                None
                if self.config is None
                else ConfigWatch(self.config, _load, started, CONFIG_LOOK_EVERY)
            )
            while not stop.is_set():
                if not feeder.is_alive() and not stop.is_set():
                    # The daemon itself failed: without its watch it would serve nothing.
                    raise watcher.failure or AgentdocError(
                        "the watch of the tree stopped; agentdoc watch ends"
                    )
                self._tick(watcher)
                if config is not None and (reread := config.look()) is not None:
                    self._guarded(None, partial(self._reconfigure, reread, started, lock))
            self._shutdown()
            watcher.wake()  # a plain Event: the feed would see it only at its next tick
            feeder.join(timeout=5)
        finally:
            watcher.stop()
            stop_indexing(SHUTDOWN_GRACE)
            lock.release()

    def _watch(self, lock: TreeLock) -> Watcher:
        """The watch of the roots, its events put on the loop's queue."""
        self._watcher = Watcher(
            [r.absolute() for r in self.roots],
            step=self.settings.settle_step,
            max_wait=self.settings.settle_max,
            poll=self.poll,
            rescan_interval=self.rescan_interval,
            guard=self.settings.settle_guard,
            on_open=partial(self._put, Opened),
            on_attrib=partial(self._put, AttribChanged),
            on_conflict=partial(self._put, ConflictCopy),
            on_polling=partial(self._polling, lock),
        )
        # Margin for filesystems whose clock is coarse: a save just after this moment may
        # carry an mtime slightly before it.
        self.discovery.started_ns = time.time_ns() - FRESH_MARGIN_NS
        return self._watcher

    def _tick(self, watcher: Watcher) -> None:
        """One turn of the loop: an event (or a batch of start-up discovery), the deadlines
        due, and the chores of the loop's own."""
        busy = not self.discovered.is_set() or self.repairs.pending()
        self._step(self._deadlines.wait(BUSY_TICK if busy else IDLE_TICK))
        for event in self._deadlines.due():
            self._handle(event)
        if not self.discovered.is_set() and watcher.walked.is_set() and self._found.empty():
            self.discovered.set()
            log.info("start-up done: %d session documents", len(self._docs))
            watcher.glanced.close()
            # What start-up built (modules, parsers, the tree's index) lives as long as the
            # daemon: kept out of the collector's full passes, which otherwise walk it all
            # (tens of milliseconds) in the middle of a streaming reply.
            gc.freeze()
            self._guarded(None, self.hints.start_up_done)
        if self.pool is not None:
            self._guarded(None, self.pool.close_idle)
        for owed in self.repairs.due():
            self._guarded(owed, partial(self.turns.mend, owed))
        for held in self.gate.due():
            self._events.put(Release(held))

    def documents(self) -> list[Path]:
        """The session documents the daemon follows now (a copy: safe from any thread)."""
        return list(self._docs)

    def untrusted(self, path: Path) -> str | None:
        """Why the daemon answers nothing in `path`'s folder (a synced folder this machine does
        not trust), or None."""
        return self.gate.untrusted(path)

    def _polling(self, lock: TreeLock, reason: str) -> None:
        # Said once, where the person looks: the log, and `agentdoc status` (the lock file).
        log.warning("%s", reason)
        lock.tell_polling(reason)

    def _reconfigure(self, reread: Reread, started: Settings, lock: TreeLock) -> None:
        """Apply settings saved in the config to every running part, or say why not."""
        where = self.config
        if reread.settings is None:
            log.warning("%s: %s", where, refusal_note(reread.problem or "unreadable"))
            lock.tell("settings", refusal_note(reread.problem or "unreadable"))
            return
        new = reread.settings
        later = needing_restart(started, new)
        if applied := [key for key in reread.changed if key not in later]:
            log.info("%s read again: %s now apply", where, ", ".join(applied))
        self.apply(new)
        if later:
            log.warning("%s: %s", where, restart_note(later))
        lock.tell("settings", restart_note(later) if later else None)
        if reread.changed:
            tell_agent_problems(new, self.environ)  # a default agent that cannot start, now

    def apply(self, new: Settings) -> None:
        """Make `new` the settings of each running part: the next turn, save and look use
        them; the gate's budget and claims, notify and the warm pool change in place."""
        self.settings = self.loop.settings = new  # every part reads the loop's
        self.hints._settings = new  # the documents' next warm starts
        self.gate.apply(new)
        self.notifier.command = new.notify
        if self.pool is not None:
            # Closed when idle (close_idle) once over a smaller size; never while a turn runs.
            self.pool.capacity, self.pool.idle_timeout = new.warm_sessions, new.warm_idle

    def _synced(self, path: Path) -> Path | None:
        return synced_root(path, self.settings)  # the `synced` list as the config says now

    def _feed(self, watcher: Watcher, stop: threading.Event) -> None:
        try:
            for path in watcher.changes(stop):
                self._events.put(Changed(path))
                self.on_change(path)
        except AgentdocError:
            pass  # `watcher.failure`: the loop ends the daemon with it

    def _put(self, kind: Callable[[Path], Event], path: Path) -> None:
        self._events.put(kind(path))

    def _wake(self) -> None:
        self._events.put(None)

    def _discover(self, path: Path) -> None:
        """A file the first walk found, for start-up discovery (on the walk's thread)."""
        self._found.put(path)
        if self._found.qsize() == 1:
            # The loop waits on its events while nothing is found: it takes this one now, not
            # at its next tick (an extra wake-up now and then is harmless).
            self._wake()

    def _step(self, timeout: float) -> None:
        try:
            if self._found.empty():
                event = self._events.get(timeout=timeout)
            else:
                event = self._events.get_nowait()
            if event is None:
                return  # woken: the loop looks at `stop`
        except queue.Empty:
            # Start-up discovery only when no save is waiting: a save goes first.
            for path in take(self._found, DISCOVERY_BATCH):
                self._guarded(path, partial(self.discovery.look, path))
            return
        self._handle(event)

    def _handle(self, event: Event) -> None:
        self._guarded(event.path, partial(self._dispatch, event))

    def _dispatch(self, event: Event) -> None:
        idle = (doc := self._docs.get(event.path)) is None or doc.thread is None
        match event:
            case Changed(path):
                self.saves.on_change(path)
            case TurnEnded(path, outcome, failure):
                self._on_done(path, outcome, failure)
            case Recheck(path, begun) if idle and (doc is None or doc.begun == begun):
                self.saves.recheck(path)
            case Opened(path) if idle and doc is not None:
                # Only conversations the daemon knows: a search through a tree of notes opens
                # every file, and none of them needs reading again.
                self.hints.hint(path, "opened")
            case Remote(path):
                self.syncing.pull(path)
            case Release(path):
                self.syncing.release(path)
            case ConflictCopy(path):
                self.syncing.on_conflict(path)
            case Unsent(path):
                self.discovery.unsent(path)
            case AttribChanged(path):
                if self.repairs.owes(path):
                    self.turns.mend(path)  # e.g. `chmod 644`: the reply it owes may be closed now
                if self.turns.unlocked(path):
                    self.saves.recheck(path)  # refused as read-only, writable now: its prompt

    def _guarded(self, path: Path | None, work: Callable[[], object]) -> None:
        """Run one document's handling (or, with no `path`, a chore of the loop's own) so
        that whatever goes wrong in it stops neither the daemon nor the other documents."""
        try:
            work()
        except Exception as exc:
            self._fault(path, exc)

    def _fault(self, path: Path | None, exc: Exception) -> None:
        if path is not None and (doc := self._docs.get(path)) is not None:
            doc.seen = None  # its next save is looked at afresh, whatever it holds
            # ... and judged against the file as it now stands: the handling that failed may
            # have been the one to take it in (a turn's end reads the reply, whose own write
            # events may all have come while the turn still ran), and a prompt saved below
            # a reply the daemon never took in would look like several turns at once.
            with contextlib.suppress(OSError):
                if (data := read_stable(path)) is not None:
                    doc.text = data.decode("utf-8", "replace")
            if doc.thread is not None and not doc.thread.is_alive():
                doc.thread = doc.cancel = doc.runner = None  # its end was not taken in
        tell_fault(path, exc, self.on_progress)

    def _shutdown(self) -> None:
        stop_turns(self._docs, SHUTDOWN_GRACE)
        self.hints.close()
        self.notifier.close()
        if self.pool is not None:
            self.pool.close_all()

    # -- events ------------------------------------------------------------------------------

    def _on_done(self, path: Path, outcome: str, failure: str | None) -> None:
        self.turns.on_done(path, outcome, failure)
        while (due := self.turns.next_in_line()) is not None:
            self._guarded(due, partial(self.saves.recheck, due))

    # -- helpers -----------------------------------------------------------------------------

    def _follow(self, path: Path, *, index: bool = True) -> None:
        if index:
            note_changed(path)  # the search index, off this thread
        # A session document is rewritten in place by most editors, which its folder's mtime
        # does not show; the watcher's safety rescan looks at these files one by one.
        if self._watcher is not None:
            self._watcher.follow(path)
