"""What a decision about a version of a document does: the daemon's one place that acts on
`classify`'s verdict (remember it, forget the document, refuse it and say why, queue a prompt
behind the running turn, close a reply left open, hold a prompt back, or start its turn).

A part the `Daemon` is composed of: the saves, the start-up discovery and what synced folders
bring all come here once they have a decision. It runs on the loop's thread and works on the
loop's state (`Loop`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.daemon import capture
from agentdoc.daemon.classify import (
    Decision,
    Forget,
    Held,
    Hint,
    Hold,
    Known,
    Mend,
    Queue,
    Refuse,
    Remember,
    Submit,
    TakeOwn,
    classify,
    gated,
)
from agentdoc.daemon.hints import Hints
from agentdoc.daemon.notices import hold_bulk, notice_in_document
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.syncing import Syncing
from agentdoc.daemon.turns import Turns, take_own
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.search import note_changed
from agentdoc.turn import integrate, toplevel

log = logging.getLogger(__name__)


@dataclass
class Actions:
    loop: Loop
    turns: Turns
    hints: Hints
    # What synced folders bring, itself acting through `act`: set once both are built.
    syncing: Syncing = field(init=False)

    def act(
        self, path: Path, doc: DocState, snap: Snapshot, known: Known, decision: Decision
    ) -> None:
        """Do what `decision` about `snap`, a version of `path`, says."""
        if isinstance(decision, Submit) and (original := self.syncing.carrier(path, snap)):
            # A session lives in one document: a copy's prompt goes to the document it copies.
            self.syncing.copy_found(path, original)
            return
        if isinstance(decision, Submit):
            # The gate is asked only now, as asking may claim the document for this machine.
            git_root = toplevel(path) if snap.git_sync else None
            decision = gated(decision, self.loop.gate.why_held(path, git_root))
        match decision:
            case Remember() if snap.data is not None:
                doc.text = snap.loose_text
            case Forget():
                self.turns.gone(path, doc)
            case TakeOwn(command):
                doc.own_taken = snap.digest
                take_own(path, doc, snap.loose_text, command, snap.prompt is not None)
            case Refuse(message, refused, notice):
                doc.refused = doc.refused or refused
                if message is not None:
                    self.turns.error(path, message)
                if notice is not None and snap.text is not None:
                    notice_in_document(path, snap.text, notice, self.loop.ledger)
            case Queue(prompt):
                doc.queued = True
                # A prompt typed below the reply still streaming; deleting the reply instead
                # (a cancel) leaves the turn's own prompt pending, which is no new prompt.
                doc.prompt_below = doc.prompt_below or bool(prompt and snap.open_reply)
                if doc.runner is not None and prompt:
                    doc.runner.note_queued()
            case Mend():
                self._after_mend(path, doc, snap, known)
            case Hint():
                self.hints.hint(path, "a `## User` heading waits for its prompt", snap.text)
            case Hold(Held() as held):
                self.syncing.hold(path, held)
            case Hold(reason):
                hold_bulk(path, reason.why)
            case Submit(marker, prompt) if snap.git_sync:
                if (why := integrate(path)) is not None:
                    log.warning("%s: the remote was not merged before the turn: %s", path, why)
                self.turns.submit(path, marker, prompt)  # read again: the merge may have changed it
            case Submit(marker, prompt):
                self.turns.submit(path, marker, prompt, snap.document)
        if doc.thread is None and snap.session and snap.digest != doc.indexed:
            # Indexed for search unless a turn now runs: its end indexes the document as it
            # then stands (a long one indexed on the prompt's save too cost the daemon a third
            # of a streamed reply's CPU), and a version only once.
            doc.indexed = snap.digest
            note_changed(path)

    def _after_mend(self, path: Path, doc: DocState, snap: Snapshot, known: Known) -> None:
        """Close a reply a failed turn left open (a full disk, a moved file) first; a prompt
        the user saved below it is then sent, as their save asked."""
        previous = known.previous
        if self.turns.mend(path):
            if (data := read_stable(path)) is None:
                return
            snap = capture.of_bytes(path, self.loop.settings, self.loop.ledger, data, settled=False)
            doc.seen, doc.text, previous = snap.digest, snap.text, None
        again = Known("mended", doc.seen, previous, owes=self.loop.repairs.owes(path))
        self.act(path, doc, snap, again, classify(again, snap))
