"""The daemon's turns, from a due prompt to the look after their end: each started on its own
thread (or queued for a free slot), its end taken in, and a document gone forgotten.

A part the `Daemon` is composed of. Like the rest of the loop it runs on the loop's thread and
works on the loop's document states (`docs`); a turn's thread only reports its end back
through the loop's queue (`put`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents import start_turn
from agentdoc.config import Settings
from agentdoc.daemon.events import Changed, Deadlines, Event, Recheck
from agentdoc.daemon.gate import Gate
from agentdoc.daemon.notices import tell_error, tell_queued
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.repair import Repairs
from agentdoc.daemon.settle import read_stable
from agentdoc.daemon.synced import paced
from agentdoc.daemon.turns import DocState, after_unfinished, begin
from agentdoc.document import Document, WriteLedger, check_writable, digest
from agentdoc.errors import AgentdocError
from agentdoc.records import remove_state
from agentdoc.search import note_changed
from agentdoc.turn import Progress, TurnRunner

log = logging.getLogger(__name__)


@dataclass
class Turns:
    docs: dict[Path, DocState]  # the loop's own: read and updated on its thread only
    settings: Settings
    ledger: WriteLedger
    environ: Mapping[str, str] | None
    on_progress: Callable[[Progress], None]
    pool: WarmPool | None
    gate: Gate
    repairs: Repairs
    deadlines: Deadlines
    put: Callable[[Event], None]  # onto the loop's queue, from a turn's thread
    max_concurrent: int

    def running(self) -> int:
        return sum(1 for d in self.docs.values() if d.thread is not None)

    def submit(
        self, path: Path, marker: bool, prompt: str | None = None, parsed: Document | None = None
    ) -> None:
        """Start the turn for `path`'s prompt, or queue it until a turn ends."""
        doc = self.docs.setdefault(path, DocState())
        doc.prompt = prompt
        if self.running() >= self.max_concurrent:
            doc.waiting = True
            tell_queued(path, self.on_progress)
            return
        doc.cancel = threading.Event()
        self.gate.started(path)
        runner = TurnRunner(
            path,
            paced(path, self.settings),
            clear=self.gate.clearer(path),
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
        begin(path, doc, runner, self.error, self.put)

    def on_done(self, path: Path, outcome: str, failure: str | None) -> None:
        """Take in the end of `path`'s turn."""
        doc = self.docs.get(path)
        if doc is None:
            return
        doc.thread = doc.cancel = doc.runner = None
        queued, doc.queued, doc.prompt_below = doc.prompt_below, False, False
        if not path.exists():
            self.gone(path, doc)
        elif outcome != "done":
            note_changed(path)  # the prompt, in the search index
            # What the turn could not write (its close, its status) is owed until it can be.
            self.repairs.owe(path, failure)
            self.mend(path)
            doc.locked = outcome == "read-only" and not writable(path)
            if after_unfinished(path, doc, outcome):
                self.deadlines.add(self.settings.settle_step, Changed(path))
            elif outcome == "read-only" and not doc.locked:
                # Made writable before this end was taken in: its prompt is due now.
                self.deadlines.add(self.settings.settle_step, Recheck(path))
            elif queued and outcome in ("cancelled", "interrupted"):
                # A cancel ends the reply, not the prompt saved below it: sent as queued.
                self.deadlines.add(self.settings.settle_step, Recheck(path))
        elif (data := read_stable(path)) is not None:
            self._after_reply(path, doc, data)

    def unlocked(self, path: Path) -> bool:
        """True once a document whose turn was refused as read-only is writable again (a
        `chmod`): the prompt its save asked for is due, and the refusal no longer holds."""
        doc = self.docs.get(path)
        if doc is None or not doc.locked or doc.thread is not None or not writable(path):
            return False
        doc.locked = False
        return True

    def free_slot(self) -> bool:
        return self.running() < self.max_concurrent

    def _after_reply(self, path: Path, doc: DocState, data: bytes) -> None:
        if not self.ledger.is_own(path, data) and (ours := self.ledger.last(path)):
            # Saved after our last write, maybe from a copy older than the reply: a save like
            # any other, judged against what we wrote.
            doc.seen, doc.text = digest(ours), ours.decode("utf-8", "replace")
            self.deadlines.add(self.settings.settle_step, Changed(path))
            return
        # The turn's writes may still be settling, so their events have not told us the
        # conversation as it now stands: take it from the file, or a prompt saved right after
        # the reply would look like several turns arriving at once. Seen, too: a save of the
        # copy we last handled is then a change again.
        doc.seen, doc.text = digest(data), data.decode("utf-8", "replace")
        doc.indexed = doc.seen
        note_changed(path)  # the reply, in the search index
        # Whatever the user saved while the reply streamed was merged into our final write,
        # so its watch event may now read as our own content: look at the file itself. A
        # prompt found here was typed and saved by the user (our close only adds an empty
        # heading), so sending it is what their save asked for. The look waits one settle
        # step, so a save landing right now settles like any other.
        self.deadlines.add(self.settings.settle_step, Recheck(path))

    def mend(self, path: Path) -> bool:
        """Close a reply no turn owns and correct a stale status; True if the file changed."""
        doc = self.docs.get(path)
        if doc is not None and doc.thread is not None:
            return False  # its own turn is running: nothing there is stale
        if self.gate.answered_elsewhere(path):
            return False  # another machine streams into it, and closes it
        return self.repairs.mend(path)

    def gone(self, path: Path, doc: DocState) -> None:
        """Forget a document deleted or renamed away, once no turn writes into it."""
        if doc.thread is not None:
            log.error("%s: deleted or renamed while a reply was streaming", path)
            return  # its state files go when the turn has ended
        self.docs.pop(path, None)
        self.repairs.forget(path)
        self.gate.forget(path)
        remove_state(path)
        if self.pool is not None:
            self.pool.forget(path)

    def error(self, path: Path, message: str) -> None:
        tell_error(path, message, self.on_progress)


def writable(path: Path) -> bool:
    try:
        check_writable(path)
    except AgentdocError:
        return False
    return True
