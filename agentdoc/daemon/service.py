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

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from agentdoc.agents import start_turn
from agentdoc.config import Settings
from agentdoc.daemon.events import (
    AttribChanged,
    Changed,
    Deadlines,
    Event,
    Opened,
    Recheck,
    TurnEnded,
)
from agentdoc.daemon.gitguard import git_busy, not_typed
from agentdoc.daemon.hints import Hints, awaits_prompt
from agentdoc.daemon.lock import TreeLock
from agentdoc.daemon.notices import (
    hold_bulk,
    notice_in_document,
    tell_agent_problems,
    tell_error,
    tell_fault,
)
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.prompts import prompt_in, submitted
from agentdoc.daemon.repair import Repairs
from agentdoc.daemon.settle import read_stable
from agentdoc.daemon.startup import read_found, settings_problem, take, tell_unsent
from agentdoc.daemon.tree import maybe_session, stamp_of
from agentdoc.daemon.turns import DocState, after_unfinished, begin, stop_turns, take_own
from agentdoc.daemon.watcher import Watcher
from agentdoc.document import (
    DocumentError,
    FrontmatterError,
    WriteLedger,
    decode,
    digest,
    is_session_document,
    parse,
    session_problem,
    shown_name,
)
from agentdoc.errors import AgentdocError
from agentdoc.search import note_changed
from agentdoc.turn import (
    Progress,
    Status,
    TurnRunner,
    marked,
    now_iso,
    open_regions,
    own_write,
    remove_state,
    write_status,
)

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 10.0
FRESH_MARGIN_NS = 1_000_000_000
DISCOVERY_BATCH = 64  # files looked at between two checks for a waiting save
GIT_WAIT = 0.5  # seconds between looks at a repository whose index git has locked


@dataclass
class Daemon:
    roots: Sequence[Path]
    settings: Settings
    send_pending: bool = False
    poll: bool = False
    max_concurrent: int = 4
    environ: Mapping[str, str] | None = None
    on_progress: Callable[[Progress], None] = lambda _p: None
    ledger: WriteLedger = field(default_factory=WriteLedger)
    rescan_interval: float = 2.0
    retry_interval: float = 5.0  # seconds between attempts to close a reply owed a close
    _docs: dict[Path, DocState] = field(default_factory=dict, init=False)
    _events: queue.SimpleQueue[Event] = field(default_factory=queue.SimpleQueue, init=False)
    _deadlines: Deadlines = field(default_factory=Deadlines, init=False)
    _found: queue.SimpleQueue[Path] = field(default_factory=queue.SimpleQueue, init=False)
    _watcher: Watcher | None = field(default=None, init=False)
    _started_ns: int = field(default=0, init=False)
    # Set once saves are observed; `discovered` once the first walk of the tree, with the
    # recovery of replies a crash left open, is done as well.
    ready: threading.Event = field(default_factory=threading.Event, init=False)
    discovered: threading.Event = field(default_factory=threading.Event, init=False)
    pool: WarmPool | None = field(default=None, init=False)
    repairs: Repairs = field(init=False)
    hints: Hints = field(init=False)

    def __post_init__(self) -> None:
        # Agents started ahead of a turn (warm ones) carry the marker recovery knows them by.
        self.environ = marked(self.environ)
        self.repairs = Repairs(self.ledger, self.retry_interval)
        if self.settings.warm_sessions > 0:
            self.pool = WarmPool(self.settings.warm_sessions, self.settings.warm_idle)
        self.hints = Hints(self.pool, self.settings, self.environ)

    # -- lifecycle ---------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        lock = TreeLock(self.roots)
        lock.acquire()
        watcher = Watcher(
            [r.absolute() for r in self.roots],
            step=self.settings.settle_step,
            max_wait=self.settings.settle_max,
            poll=self.poll,
            rescan_interval=self.rescan_interval,
            guard=self.settings.settle_guard,
            on_open=lambda path: self._events.put(Opened(path)),
            on_attrib=lambda path: self._events.put(AttribChanged(path)),
        )
        self._watcher = watcher
        # Margin for filesystems whose clock is coarse: a save just after this moment may
        # carry an mtime slightly before it.
        self._started_ns = time.time_ns() - FRESH_MARGIN_NS
        try:
            # Saves are observed from here on; the first walk of the tree (which may hold a
            # great many notes) goes on behind, feeding start-up discovery as it finds files.
            watcher.start(self._found.put, background=True)
            feeder = threading.Thread(target=self._feed, args=(watcher, stop), daemon=True)
            feeder.start()
            self.ready.set()
            log.info("watching %s", ", ".join(str(r) for r in self.roots))
            tell_agent_problems(self.settings, self.environ)
            while not stop.is_set():
                if not feeder.is_alive() and not stop.is_set():
                    # The daemon itself failed: without its watch it would serve nothing.
                    raise AgentdocError("the watch of the tree stopped; agentdoc watch ends")
                self._step(self._deadlines.wait(0.1))
                for event in self._deadlines.due():
                    self._handle(event)
                if not self.discovered.is_set() and watcher.walked.is_set() and self._found.empty():
                    self.discovered.set()
                    log.info("start-up done: %d session documents", len(self._docs))
                    self._guarded(None, self.hints.start_up_done)
                if self.pool is not None:
                    self._guarded(None, self.pool.close_idle)
                for owed in self.repairs.due():
                    self._guarded(owed, partial(self._mend, owed))
            self._shutdown()
            feeder.join(timeout=5)
        finally:
            watcher.stop()
            lock.release()

    def _feed(self, watcher: Watcher, stop: threading.Event) -> None:
        for path in watcher.changes(stop):
            self._events.put(Changed(path))

    def _step(self, timeout: float) -> None:
        try:
            if self._found.empty():
                event = self._events.get(timeout=timeout)
            else:
                event = self._events.get_nowait()
        except queue.Empty:
            # Start-up discovery only when no save is waiting: a save goes first.
            self._discover(take(self._found, DISCOVERY_BATCH))
            return
        self._handle(event)

    def _handle(self, event: Event) -> None:
        self._guarded(event.path, partial(self._dispatch, event))

    def _dispatch(self, event: Event) -> None:
        idle = (doc := self._docs.get(event.path)) is None or doc.thread is None
        match event:
            case Changed(path):
                self._on_change(path)
            case TurnEnded(path, outcome, failure):
                self._on_done(path, outcome, failure)
            case Recheck(path) if idle:
                self._recheck(path)
            case Opened(path) if idle and doc is not None:
                # Only conversations the daemon knows: a search through a tree of notes opens
                # every file, and none of them needs reading again.
                self.hints.hint(path, "opened")
            case AttribChanged(path) if self.repairs.owes(path):
                self._mend(path)  # e.g. `chmod 644`: the reply it owes may be closed now

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
            if doc.thread is not None and not doc.thread.is_alive():
                doc.thread = doc.cancel = doc.runner = None  # its end was not taken in
        tell_fault(path, exc, self.on_progress)

    def _shutdown(self) -> None:
        stop_turns(self._docs, SHUTDOWN_GRACE)
        self.hints.close()
        if self.pool is not None:
            self.pool.close_all()

    # -- events ------------------------------------------------------------------------------

    def _discover(self, paths: Sequence[Path]) -> None:
        """Remember what each document holds at start-up; send nothing unless asked to."""
        for path in paths:
            if path in self._docs:
                continue  # saved since start-up, and handled as a save
            try:
                self._discover_one(path)
            except AgentdocError as exc:
                self._error(path, str(exc))
            except Exception as exc:  # one document must not keep the others from start-up
                self._fault(path, exc)

    def _discover_one(self, path: Path) -> None:
        found = read_found(path, self.ledger)
        if found is None:
            return
        if not found.session:
            self._refuse(path, found.text)
            return
        # A file written since the watch began was saved by someone, and its event is on its
        # way: left unseen, that event counts as the save it is.
        fresh = found.mtime >= self._started_ns
        known = self._docs.setdefault(path, DocState())
        known.seen, known.text = (None if fresh else digest(found.data)), found.text
        self._follow(path)
        self.hints.found_at_start(path, found.mtime)
        if self.send_pending:
            self._consider(path, found.text)
        elif (problem := settings_problem(found.text)) is not None:
            # Settings that fail validation are told now, not found out at the next save.
            self._error(path, f"{shown_name(path.name)}: {problem}")
        elif prompt_in(found.text, self.settings) is not None:
            # The next save of it sends it, even an unchanged one.
            self._docs[path].seen = None
            tell_unsent(path)

    def _on_change(self, path: Path) -> None:
        if git_busy(path):
            # git is rewriting the tree (checkout, stash, reset, pull): read nothing half-done
            # and write nothing it would then refuse to overwrite; look again when it is done.
            self._deadlines.add(GIT_WAIT, Changed(path))
            return
        doc = self._docs.setdefault(path, DocState())
        if doc.thread is not None and self.ledger.is_own_stamp(path, stamp_of(path)):
            # The turn's own streamed write, untouched since: not read and hashed again on
            # every flush of a long document (the turn's end reads the file anyway).
            return
        data = read_stable(path)
        if data is None:
            self._gone(path, doc)
            return
        hashed = digest(data)  # once: a long document costs milliseconds per hash
        if self.ledger.is_own(path, data, hashed) or hashed == doc.seen:
            doc.seen = hashed
            doc.text = data.decode("utf-8", "replace")
            return
        doc.seen = hashed
        if not maybe_session(data):
            return
        if (command := own_write(path, hashed)) is not None:
            take_own(path, doc, decode(path, data), command, self.settings)
            return
        try:
            text = decode(path, data)
        except AgentdocError as exc:
            self._error(path, str(exc))
            return
        previous, doc.text = doc.text, text
        if not is_session_document(text):
            self._refuse(path, text)
            return
        if doc.refused:
            # Repaired: the error the broken version left in the status is over.
            doc.refused = False
            write_status(path, Status(document=path.name, state="idle", updated=now_iso()))
        # Indexed for search below unless a turn runs: its end indexes the document as it then
        # stands, and a long one indexed twice more per prompt cost the daemon a third of a
        # streamed reply's CPU.
        self._follow(path, index=False)
        if doc.thread is not None:
            # The running turn itself notices a deleted (or stale-saved) reply block; a prompt
            # saved meanwhile is looked for when the turn ends.
            doc.queued = True
            if doc.runner is not None and prompt_in(text, self.settings) is not None:
                doc.runner.note_queued()
            return
        if (open_regions(text) or self.repairs.owes(path)) and self._mend(path):
            # A reply a failed turn left open (a full disk, a moved file) is closed first; a
            # prompt the user saved below it is then sent, as their save asked.
            if (data := read_stable(path)) is None:
                return
            doc.seen, doc.text, previous = digest(data), decode(path, data), None
            text = doc.text
        if self.repairs.owes(path):
            note_changed(path)
            return  # the open reply cannot be closed yet; nothing is sent below it
        self._consider(path, text, previous, saved=True)
        if doc.thread is None and not doc.waiting:
            note_changed(path)  # the search index, off this thread

    def _mend(self, path: Path) -> bool:
        """Close a reply no turn owns and correct a stale status; True if the file changed."""
        doc = self._docs.get(path)
        if doc is not None and doc.thread is not None:
            return False  # its own turn is running: nothing there is stale
        return self.repairs.mend(path)

    def _gone(self, path: Path, doc: DocState) -> None:
        if doc.thread is not None:
            log.error("%s: deleted or renamed while a reply was streaming", path)
            return  # its state files go when the turn has ended
        self._docs.pop(path, None)
        self.repairs.forget(path)
        remove_state(path)
        if self.pool is not None:
            self.pool.forget(path)

    def _consider(
        self, path: Path, text: str, previous: str | None = None, *, saved: bool = False
    ) -> None:
        """Submit the pending prompt; for a `saved` change, only if the change asked for it."""
        try:
            parsed = parse(text)
        except (DocumentError, FrontmatterError) as exc:
            self._error(path, f"{shown_name(path.name)}: {exc}")
            if saved:  # a prompt saved with settings that cannot be used is told where it is
                notice_in_document(path, text, str(exc), self.ledger)
            return
        marker, prompt = submitted(parsed, self.settings)
        if prompt is None:
            if awaits_prompt(parsed):
                self.hints.hint(path, "a `## User` heading waits for its prompt", text)
            return
        if (verdict := not_typed(path, parsed, previous, saved=saved)) is not None:
            hold_bulk(path, verdict)
            return
        self._submit(path, marker, prompt)

    def _submit(self, path: Path, marker: bool, prompt: str | None = None) -> None:
        doc = self._docs.setdefault(path, DocState())
        doc.prompt = prompt
        if self._running() >= self.max_concurrent:
            doc.waiting = True
            write_status(path, Status(document=path.name, state="queued", updated=now_iso()))
            self.on_progress(Progress(path, 0, "queued", 0.0, 0, None))
            return
        doc.cancel = threading.Event()
        runner = TurnRunner(
            path,
            self.settings,
            mode="run",
            ledger=self.ledger,
            environ=self.environ,
            on_progress=self.on_progress,
            cancel=doc.cancel,
            require_marker=marker,
            launcher=self.pool.launcher(path) if self.pool is not None else start_turn,
            notice_start_failure=True,
        )
        begin(path, doc, runner, self._error, self._events.put)

    def _on_done(self, path: Path, outcome: str, failure: str | None) -> None:
        doc = self._docs.get(path)
        if doc is not None:
            doc.thread = doc.cancel = doc.runner = None
            doc.queued = False
            if not path.exists():
                self._gone(path, doc)
            elif outcome != "done":
                note_changed(path)  # the prompt, in the search index
                # What the turn could not write (its close, its status) is owed until it can be.
                self.repairs.owe(path, failure)
                self._mend(path)
                if after_unfinished(path, doc, outcome):
                    self._deadlines.add(self.settings.settle_step, Changed(path))
            elif (data := read_stable(path)) is not None:
                # The turn's writes may still be settling, so their events have not told us
                # the conversation as it now stands: take it from the file, or a prompt saved
                # right after the reply would look like several turns arriving at once.
                doc.text = data.decode("utf-8", "replace")
                note_changed(path)  # the reply, in the search index
                # Whatever the user saved while the reply streamed was merged into our final
                # write, so its watch event may now read as our own content: look at the file
                # itself. A prompt found here was typed and saved by the user (our close only
                # adds an empty heading), so sending it is what their save asked for. The look
                # waits one settle step, so a save landing right now settles like any other.
                self._deadlines.add(self.settings.settle_step, Recheck(path))
        for other, waiting in list(self._docs.items()):
            if waiting.waiting and self._running() < self.max_concurrent:
                waiting.waiting = False
                self._guarded(other, partial(self._recheck, other))

    def _recheck(self, path: Path) -> None:
        data = read_stable(path)
        if data is not None and path in self._docs:
            text = decode(path, data)
            known = self._docs[path]
            known.seen, known.text = digest(data), text
            if (command := own_write(path, known.seen)) is not None:
                take_own(path, known, text, command, self.settings)
                return
            # The turn's own writes changed the structure, so only git is looked for: a
            # checkout landing just as the turn ended is still git's, not a prompt.
            self._consider(path, text, saved=True)

    # -- helpers -----------------------------------------------------------------------------

    def _follow(self, path: Path, *, index: bool = True) -> None:
        if index:
            note_changed(path)  # the search index, off this thread
        # A session document is rewritten in place by most editors, which its folder's mtime
        # does not show; the watcher's safety rescan looks at these files one by one.
        if self._watcher is not None:
            self._watcher.follow(path)

    def _running(self) -> int:
        return sum(1 for d in self._docs.values() if d.thread is not None)

    def _refuse(self, path: Path, text: str) -> None:
        """Say why a document that means to be a session document cannot be used."""
        problem = session_problem(text)
        if problem is None:
            return
        self._docs.setdefault(path, DocState()).refused = True
        self._error(path, f"{path.name}: {problem}. Fix it and save; until then it is left alone")

    def _error(self, path: Path, message: str) -> None:
        tell_error(path, message, self.on_progress)
