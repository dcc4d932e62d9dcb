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

import gc
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
from agentdoc.daemon import capture
from agentdoc.daemon.classify import (
    Decision,
    Forget,
    Held,
    Hint,
    Hold,
    Ignore,
    Known,
    Later,
    Mend,
    Queue,
    Refuse,
    Remember,
    Submit,
    TakeOwn,
    classify,
    gated,
)
from agentdoc.daemon.conflicts import conflicts_of, original_of, take_in
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
    TurnEnded,
)
from agentdoc.daemon.gate import Gate, gate_for
from agentdoc.daemon.gitguard import git_busy
from agentdoc.daemon.gitpoll import start_polling
from agentdoc.daemon.hints import Hints
from agentdoc.daemon.lock import TreeLock
from agentdoc.daemon.notices import (
    hold,
    hold_bulk,
    notice_in_document,
    tell_agent_problems,
    tell_error,
    tell_fault,
)
from agentdoc.daemon.notify import Notifier
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.repair import Repairs
from agentdoc.daemon.settle import read_stable
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.stale import rebase_save
from agentdoc.daemon.startup import read_found, take, tell_unsent
from agentdoc.daemon.synced import paced
from agentdoc.daemon.tree import changed_ns
from agentdoc.daemon.turns import DocState, after_unfinished, begin, stop_turns, take_own
from agentdoc.daemon.watcher import Watcher
from agentdoc.document import (
    Document,
    WriteLedger,
    digest,
    session_problem,
    shown_name,
)
from agentdoc.errors import AgentdocError
from agentdoc.search import note_changed, stop_indexing
from agentdoc.turn import (
    Progress,
    Status,
    TurnRunner,
    integrate,
    marked,
    now_iso,
    remove_state,
    toplevel,
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
    # The synced folder a document is in, if any: its prompts wait for `agentdoc trust`.
    synced_root: Callable[[Path], Path | None] | None = None  # default: markers and config
    machine: str | None = None  # this machine's id (default: the one in local state)
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
    gate: Gate = field(init=False)
    notifier: Notifier = field(init=False)

    def __post_init__(self) -> None:
        # Agents started ahead of a turn (warm ones) carry the marker recovery knows them by.
        self.environ = marked(self.environ)
        self.repairs = Repairs(self.ledger, self.retry_interval)
        self.gate = gate_for(self.settings, self.synced_root, self.machine)
        self.notifier = Notifier(self.settings.notify, self.environ)
        self.on_progress = self.notifier.wrap(self.on_progress)
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
            on_conflict=lambda path: self._events.put(ConflictCopy(path)),
            on_polling=partial(self._polling, lock),
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
            start_polling(self._snapshot, self.settings, self._remote_moved, stop)
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
                    # What start-up built (modules, parsers, the tree's index) lives as long as
                    # the daemon: kept out of the collector's full passes, which otherwise walk
                    # it all (tens of milliseconds) in the middle of a streaming reply.
                    gc.freeze()
                    self._guarded(None, self.hints.start_up_done)
                if self.pool is not None:
                    self._guarded(None, self.pool.close_idle)
                for owed in self.repairs.due():
                    self._guarded(owed, partial(self._mend, owed))
                for held in self.gate.due():
                    self._events.put(Release(held))
            self._shutdown()
            feeder.join(timeout=5)
        finally:
            watcher.stop()
            stop_indexing(SHUTDOWN_GRACE)
            lock.release()

    def _polling(self, lock: TreeLock, reason: str) -> None:
        # Said once, where the person looks: the log, and `agentdoc status` (the lock file).
        log.warning("%s", reason)
        lock.tell_polling(reason)

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
            case Remote(path):
                self._pull(path)
            case Release(path):
                self._release(path)
            case ConflictCopy(path):
                self._on_conflict(path)
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
        self.notifier.close()
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
        found = read_found(path, self.ledger, self.gate.answered_elsewhere)
        if found is None:
            return
        if not found.session:
            self._refuse(path, found.text)
            return
        # A file written since the watch began was saved by someone, and its event is on its
        # way: left unseen, that event counts as the save it is.
        fresh = found.arrived >= self._started_ns
        # Read once: the settings, the prompt and (if asked) the decision come from this value.
        snap = Snapshot(path, self.settings, found.data, digest(found.data))
        doc = self._docs.setdefault(path, DocState())
        doc.seen, doc.text = (None if fresh else snap.digest), found.text
        doc.saves.append(found.text)
        self._follow(path)
        self.hints.found_at_start(path, found.mtime)
        for copy in conflicts_of(path):  # made while no daemon watched
            self._events.put(ConflictCopy(copy))
        if fresh and self.poll:
            # Polling compares later looks with the walk, which already saw this version:
            # no event is on its way, so the save is taken as it is now.
            self._events.put(Changed(path))
        elif self.send_pending:
            self._act(path, doc, snap, Known("found"), classify(Known("found"), snap))
        elif (problem := snap.settings_problem) is not None:
            # Settings that fail validation are told now, not found out at the next save.
            self._error(path, f"{shown_name(path.name)}: {problem}")
        elif snap.prompt is not None:
            # The next save of it sends it, even an unchanged one.
            self._docs[path].seen = None
            tell_unsent(path)

    def _on_change(self, path: Path) -> None:
        doc = self._docs.get(path)
        running = doc is not None and doc.thread is not None
        seen = None if doc is None else doc.seen
        snap = capture.take(path, self.settings, self.ledger, turn_running=running, seen=seen)
        previous = None if doc is None else doc.text
        known = Known("save", seen, previous, running, owes=self.repairs.owes(path))
        decision = classify(known, snap)
        if isinstance(decision, Later):
            # git is rewriting the tree (checkout, stash, reset, pull): read nothing half-done
            # and write nothing it would then refuse to overwrite; look again when it is done.
            self._deadlines.add(GIT_WAIT, Changed(path))
            return
        doc = self._docs.setdefault(path, DocState())
        if snap.data is not None:
            doc.seen = snap.digest
        settled = not isinstance(decision, (Remember, Forget, Ignore, TakeOwn))
        if settled and snap.text is not None:
            self._admit(path, doc, snap)
            if isinstance(decision, Queue):
                doc.saves.append(snap.text)  # the copy the person's editor holds now
            elif snap.session:
                if (rebased := self._rebased(path, doc, previous, snap)) is None:
                    return
                if rebased is not snap:  # saved from a copy older than the reply: merged
                    snap, known = rebased, Known("merged", doc.seen, previous, owes=known.owes)
                    decision = classify(known, snap)
                for copy in conflicts_of(path):  # a sync tool may have put one aside with it
                    self._events.put(ConflictCopy(copy))
        self._act(path, doc, snap, known, decision)

    def _rebased(
        self, path: Path, doc: DocState, previous: str | None, snap: Snapshot
    ) -> Snapshot | None:
        """`snap`, or the merge with our writes written when it was saved from a copy older
        than them; None when another save landed meanwhile (its own event follows)."""
        assert snap.text is not None and snap.data is not None
        text = rebase_save(path, doc, previous, snap.text, snap.data, self.ledger)
        if text is None or text == snap.text:
            return None if text is None else snap
        return self._of_text(path, text)

    def _of_text(self, path: Path, text: str) -> Snapshot:
        """The snapshot of a version agentdoc has just written itself (a merge)."""
        data = text.encode("utf-8")
        return capture.of_bytes(path, self.settings, self.ledger, data, settled=False)

    def _admit(self, path: Path, doc: DocState, snap: Snapshot) -> None:
        """Take a readable version in as the conversation the daemon now knows."""
        doc.text = snap.text
        if not snap.session:
            return
        if doc.refused:
            # Repaired: the error the broken version left in the status is over.
            doc.refused = False
            write_status(path, Status(document=path.name, state="idle", updated=now_iso()))
        self._follow(path, index=False)  # indexed once acted on (see `_act`)

    def _act(
        self, path: Path, doc: DocState, snap: Snapshot, known: Known, decision: Decision
    ) -> None:
        if isinstance(decision, Submit):
            # The gate is asked only now, as asking may claim the document for this machine.
            git_root = toplevel(path) if snap.git_sync else None
            decision = gated(decision, self.gate.why_held(path, git_root))
        match decision:
            case Remember() if snap.data is not None:
                doc.text = snap.loose_text
            case Forget():
                self._gone(path, doc)
            case TakeOwn(command):
                take_own(path, doc, snap.loose_text, command, snap.prompt is not None)
            case Refuse(message, refused, notice):
                doc.refused = doc.refused or refused
                if message is not None:
                    self._error(path, message)
                if notice is not None and snap.text is not None:
                    notice_in_document(path, snap.text, notice, self.ledger)
            case Queue(prompt):
                doc.queued = True
                if doc.runner is not None and prompt:
                    doc.runner.note_queued()
            case Mend():
                self._after_mend(path, doc, snap, known)
            case Hint():
                self.hints.hint(path, "a `## User` heading waits for its prompt", snap.text)
            case Hold(Held() as held):
                self._hold(path, held)
            case Hold(reason):
                hold_bulk(path, reason.why)
            case Submit(marker, prompt) if snap.git_sync:
                if (why := integrate(path)) is not None:
                    log.warning("%s: the remote was not merged before the turn: %s", path, why)
                self._submit(path, marker, prompt)  # read again: the merge may have changed it
            case Submit(marker, prompt):
                self._submit(path, marker, prompt, snap.document)
        if doc.thread is None and snap.session and snap.digest != doc.indexed:
            # Indexed for search unless a turn now runs: its end indexes the document as it
            # then stands (a long one indexed on the prompt's save too cost the daemon a third
            # of a streamed reply's CPU), and a version only once.
            doc.indexed = snap.digest
            note_changed(path)

    def _hold(self, path: Path, held: Held) -> None:
        """A due prompt the gate keeps back: said once per reason, sent when it allows."""
        changed, tell = self.gate.hold(path, held)
        if changed:
            log.log(logging.INFO if held.quiet else logging.WARNING, "%s: %s", path, held.why)
            hold(path, held.why)
        if tell:
            self.on_progress(Progress(path, 0, "held", 0.0, 0, None, held.why))

    def _snapshot(self) -> list[tuple[Path, str | None]]:
        return [(path, doc.text) for path, doc in list(self._docs.items())]

    def _remote_moved(self, path: Path) -> None:
        self._events.put(Remote(path))

    def _pull(self, path: Path) -> None:
        """Merge what the remote has for `path` and read it like a save (not while it runs)."""
        doc = self._docs.get(path)
        if doc is None or doc.thread is not None:
            return  # the push after the turn merges the remote
        if (why := integrate(path)) is not None:
            log.warning("%s: the remote's commits were not merged: %s", path, why)
        if (data := read_stable(path)) is None or digest(data) == doc.seen:
            return
        previous = doc.text
        self._look(path, doc, data, Known("pulled", digest(data), previous))

    def _release(self, path: Path) -> None:
        self.gate.release(path)
        doc = self._docs.get(path)
        if doc is None or doc.thread is not None or (data := read_stable(path)) is None:
            return
        self._look(path, doc, data, Known("released", digest(data)))

    def _look(self, path: Path, doc: DocState, data: bytes, known: Known) -> None:
        """Take `data`, just read, as the version the daemon knows, and act on it."""
        snap = capture.of_bytes(path, self.settings, self.ledger, data, settled=False)
        doc.seen, doc.text = snap.digest, snap.loose_text
        self._act(path, doc, snap, known, classify(known, snap))

    def _after_mend(self, path: Path, doc: DocState, snap: Snapshot, known: Known) -> None:
        """Close a reply a failed turn left open (a full disk, a moved file) first; a prompt
        the user saved below it is then sent, as their save asked."""
        previous = known.previous
        if self._mend(path):
            if (data := read_stable(path)) is None:
                return
            snap = capture.of_bytes(path, self.settings, self.ledger, data, settled=False)
            doc.seen, doc.text, previous = snap.digest, snap.text, None
        again = Known("mended", doc.seen, previous, owes=self.repairs.owes(path))
        self._act(path, doc, snap, again, classify(again, snap))

    def _on_conflict(self, copy: Path) -> None:
        """Merge a sync tool's conflict copy into its session document, once no turn runs."""
        original = original_of(copy)
        doc = None if original is None else self._docs.get(original)
        if original is None or doc is None:
            return  # not a conversation of ours: the copy is the person's business
        quiet = time.time_ns() - changed_ns(copy) >= self.settings.settle_step * 1e9
        if doc.thread is not None or git_busy(original) or not quiet:
            self._deadlines.add(self.settings.settle_step, ConflictCopy(copy))
            return
        previous = doc.text
        if (text := take_in(copy, original, doc, self.ledger)) is not None:
            snap = self._of_text(original, text)
            known = Known("merged", doc.seen, previous, owes=self.repairs.owes(original))
            self._act(original, doc, snap, known, classify(known, snap))

    def _mend(self, path: Path) -> bool:
        """Close a reply no turn owns and correct a stale status; True if the file changed."""
        doc = self._docs.get(path)
        if doc is not None and doc.thread is not None:
            return False  # its own turn is running: nothing there is stale
        if self.gate.answered_elsewhere(path):
            return False  # another machine streams into it, and closes it
        return self.repairs.mend(path)

    def _gone(self, path: Path, doc: DocState) -> None:
        if doc.thread is not None:
            log.error("%s: deleted or renamed while a reply was streaming", path)
            return  # its state files go when the turn has ended
        self._docs.pop(path, None)
        self.repairs.forget(path)
        self.gate.forget(path)
        remove_state(path)
        if self.pool is not None:
            self.pool.forget(path)

    def _submit(
        self, path: Path, marker: bool, prompt: str | None = None, parsed: Document | None = None
    ) -> None:
        doc = self._docs.setdefault(path, DocState())
        doc.prompt = prompt
        if self._running() >= self.max_concurrent:
            doc.waiting = True
            write_status(path, Status(document=path.name, state="queued", updated=now_iso()))
            self.on_progress(Progress(path, 0, "queued", 0.0, 0, None))
            return
        doc.cancel = threading.Event()
        self.gate.started(path)
        runner = TurnRunner(
            path,
            paced(path, self.settings),
            mode="run",
            ledger=self.ledger,
            environ=self.environ,
            on_progress=self.on_progress,
            cancel=doc.cancel,
            require_marker=marker,
            launcher=self.pool.launcher(path) if self.pool is not None else start_turn,
            notice_start_failure=True,
            parsed=parsed,
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
                if not self.ledger.is_own(path, data) and (ours := self.ledger.last(path)):
                    # Saved after our last write, maybe from a copy older than the reply: a
                    # save like any other, judged against what we wrote.
                    doc.seen, doc.text = digest(ours), ours.decode("utf-8", "replace")
                    self._deadlines.add(self.settings.settle_step, Changed(path))
                    return
                # The turn's writes may still be settling, so their events have not told us
                # the conversation as it now stands: take it from the file, or a prompt saved
                # right after the reply would look like several turns arriving at once.
                # Seen, too: a save of the copy we last handled is then a change again.
                doc.seen, doc.text = digest(data), data.decode("utf-8", "replace")
                doc.indexed = doc.seen
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
        if data is not None and (doc := self._docs.get(path)) is not None:
            snap = capture.of_bytes(path, self.settings, self.ledger, data, settled=False)
            previous, doc.seen, doc.text = doc.text, snap.digest, snap.loose_text
            if snap.own_command is None and not snap.own_content and snap.text is not None:
                # A save that landed as the turn ended, maybe from a copy older than the reply.
                if (rebased := self._rebased(path, doc, previous, snap)) is None:
                    return
                snap = rebased
            # The turn's own writes changed the structure, so only git is looked for: a
            # checkout landing just as the turn ended is still git's, not a prompt.
            known = Known("recheck", doc.seen)
            self._act(path, doc, snap, known, classify(known, snap))

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
