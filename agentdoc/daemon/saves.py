"""A settled save, and the look after a turn's end, taken down to one decision: the snapshot,
what the daemon knows of the document, `classify`, and the steps a synced or stale copy adds
(a save made from a copy older than agentdoc's writes is merged first, and the merge is what
is decided about). What the decision does is `Actions.act` (`acting.py`).

A part the `Daemon` is composed of: it runs on the loop's thread and works on the loop's
state (`Loop`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentdoc.daemon import capture
from agentdoc.daemon.classify import (
    Forget,
    Ignore,
    Known,
    Later,
    Queue,
    Remember,
    TakeOwn,
    classify,
)
from agentdoc.daemon.conflicts import conflicts_of
from agentdoc.daemon.events import Changed, ConflictCopy
from agentdoc.daemon.notices import tell_repaired
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.stale import rebase_save
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.syncing import Act
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.document import digest

GIT_WAIT = 0.5  # seconds between looks at a repository whose index git has locked


@dataclass
class Saves:
    loop: Loop
    act: Act
    follow: Callable[[Path], None]  # a session document: the watcher's rescan looks at it

    def on_change(self, path: Path) -> None:
        """A settled save of `path` (or its deletion)."""
        doc = self.loop.docs.get(path)
        running = doc is not None and doc.thread is not None
        seen = None if doc is None else doc.seen
        snap = capture.take(
            path, self.loop.settings, self.loop.ledger, turn_running=running, seen=seen
        )
        previous = None if doc is None else doc.text
        if doc is not None and (base := self._own_base(doc, snap)) is not None:
            # `undo`/`archive` wrote over the version we knew, and this save came after: it
            # was made from their version, even if their write's own event has not come yet.
            previous = base
        known = Known("save", seen, previous, running, owes=self.loop.repairs.owes(path))
        decision = classify(known, snap)
        if isinstance(decision, Later):
            # git is rewriting the tree (checkout, stash, reset, pull): read nothing half-done
            # and write nothing it would then refuse to overwrite; look again when it is done.
            self.loop.deadlines.add(GIT_WAIT, Changed(path))
            return
        doc = self.loop.docs.setdefault(path, DocState())
        if snap.data is not None:
            doc.seen = snap.digest
        settled = not isinstance(decision, (Remember, Forget, Ignore, TakeOwn))
        if settled and snap.text is not None:
            self._admit(path, doc, snap)
            if isinstance(decision, Queue):
                doc.saves.append(snap.text)  # the copy the person's editor holds now
                doc.queued_save = snap.text
            elif snap.session:
                if (rebased := self._rebased(path, doc, previous, snap)) is None:
                    # Not taken in: the save that landed meanwhile is judged against what was
                    # known before, or it would look like no change and its prompt be lost.
                    doc.seen, doc.text = seen, previous
                    return
                if rebased is not snap:  # saved from a copy older than the reply: merged
                    snap, known = rebased, Known("merged", doc.seen, previous, owes=known.owes)
                    decision = classify(known, snap)
                for copy in conflicts_of(path):  # a sync tool may have put one aside with it
                    self.loop.put(ConflictCopy(copy))
        self.act(path, doc, snap, known, decision)

    def recheck(self, path: Path) -> None:
        """The look at a document after its turn ended (or a slot for it came free)."""
        data = read_stable(path)
        if data is not None and (doc := self.loop.docs.get(path)) is not None:
            snap = capture.of_bytes(path, self.loop.settings, self.loop.ledger, data, settled=False)
            seen, previous = doc.seen, doc.text
            doc.seen, doc.text = snap.digest, snap.loose_text
            if snap.own_command is None and not snap.own_content and snap.text is not None:
                # A save that landed as the turn ended, maybe from a copy older than the reply.
                if (rebased := self._rebased(path, doc, previous, snap)) is None:
                    doc.seen, doc.text = seen, previous  # the save that landed meanwhile decides
                    return
                snap = rebased
            # The turn's own writes changed the structure, so only git is looked for: a
            # checkout landing just as the turn ended is still git's, not a prompt.
            known = Known("recheck", doc.seen)
            self.act(path, doc, snap, known, classify(known, snap))

    def _own_base(self, doc: DocState, snap: Snapshot) -> str | None:
        """The version `undo`/`archive` wrote that `snap` was saved from, if not taken in yet."""
        if snap.own_base is None:
            return None
        taken = digest(snap.own_base.encode("utf-8"))
        if taken == doc.own_taken:
            return None  # taken in already: the version we knew came back since
        doc.own_taken = taken
        return snap.own_base

    def _rebased(
        self, path: Path, doc: DocState, previous: str | None, snap: Snapshot
    ) -> Snapshot | None:
        """`snap`, or the merge with our writes written when it was saved from a copy older
        than them; None when another save landed meanwhile (its own event follows)."""
        assert snap.text is not None and snap.data is not None
        text = rebase_save(path, doc, previous, snap.text, snap.data, self.loop.ledger)
        if text is None or text == snap.text:
            return None if text is None else snap
        return capture.of_text(path, self.loop.settings, self.loop.ledger, text)

    def _admit(self, path: Path, doc: DocState, snap: Snapshot) -> None:
        """Take a readable version in as the conversation the daemon now knows."""
        doc.text = snap.text
        if not snap.session:
            return
        if doc.refused:
            # Repaired: the error the broken version left in the status is over.
            doc.refused = False
            tell_repaired(path)
        self.follow(path)  # indexed once acted on (see `Actions.act`)
