"""The daemon's handling of what synced folders bring: a sync tool's conflict copy, the remote's
commits `git: sync` fetched, a prompt the gate held and now lets go, and the holding itself.

Each comes in as an event of the loop (`ConflictCopy`, `Remote`, `Release`) or as the gate's
verdict on a due prompt (`Hold(Held)`), and goes down the same path as a save: a snapshot,
`classify`, and `Actions.act` (`acting.py`). This is a part the `Daemon` is composed of; it
owns no document state, it works on the loop's (`Loop`), on the loop's thread.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.daemon import capture
from agentdoc.daemon.classify import Decision, Held, Known, classify
from agentdoc.daemon.conflicts import conflicts_of, original_of, rebuild, session_of, take_in
from agentdoc.daemon.events import ConflictCopy
from agentdoc.daemon.notices import hold
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.synced.gitguard import git_busy
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.tree import changed_ns
from agentdoc.document import digest
from agentdoc.records import read_status
from agentdoc.turn import Progress, integrate

log = logging.getLogger(__name__)

Act = Callable[[Path, DocState, Snapshot, Known, Decision], None]
HOLD_COPY = "merge what it adds into that document, or delete its `session:` to start anew"


@dataclass
class Syncing:
    loop: Loop
    act: Act  # `Actions.act`: what a decision about a version does
    # Copies named in no tool's table, found by the session id they carry: copy -> document.
    copies: dict[Path, Path] = field(default_factory=dict)

    def conversations(self) -> list[tuple[Path, str | None]]:
        """Every document the daemon knows, with its text (what the git sync poll looks at)."""
        return [(path, doc.text) for path, doc in list(self.loop.docs.items())]

    def pull(self, path: Path) -> None:
        """Merge what the remote has for `path` and read it like a save (not while it runs)."""
        doc = self.loop.docs.get(path)
        if doc is None or doc.thread is not None:
            return  # the push after the turn merges the remote
        if (why := integrate(path)) is not None:
            log.warning("%s: the remote's commits were not merged: %s", path, why)
        if (data := read_stable(path)) is None or digest(data) == doc.seen:
            return
        previous = doc.text
        self._look(path, doc, data, Known("pulled", digest(data), previous))

    def release(self, path: Path) -> None:
        """The gate lets a prompt it held go: decide about the document as it now stands."""
        self.loop.gate.release(path)
        doc = self.loop.docs.get(path)
        if doc is None or doc.thread is not None or (data := read_stable(path)) is None:
            return
        self._look(path, doc, data, Known("released", digest(data)))

    def hold(self, path: Path, held: Held) -> None:
        """A due prompt the gate keeps back: said once per reason, sent when it allows."""
        changed, tell = self.loop.gate.hold(path, held)
        if changed:
            log.log(logging.INFO if held.quiet else logging.WARNING, "%s: %s", path, held.why)
            hold(path, held.why)
        if tell:
            self.loop.on_progress(Progress(path, 0, "held", 0.0, 0, None, held.why))

    def carrier(self, path: Path, snap: Snapshot) -> Path | None:
        """The document of `path`'s folder that already carries the session `path` names, when
        `path` is the copy of the two: a session lives in one document. The copy is the one
        agentdoc did not write (its last write, or the turns it ran, say which it did); of
        two it wrote, or neither, the one just saved."""
        session = snap.document.meta.session if snap.document is not None else None
        if not session:
            return None
        for other, doc in list(self.loop.docs.items()):
            if (
                other == path
                or other.parent != path.parent
                or doc.text is None
                or session not in doc.text  # most documents: no parse
                or session_of(doc.text) != session
                or not os.path.lexists(other)  # a copy just merged, its deletion not yet seen
            ):
                continue
            if self._wrote(path) and not self._wrote(other):
                return None  # `other` is the copy: its own save finds this document
            return other
        return None

    def _wrote(self, path: Path) -> bool:
        return self.loop.ledger.last(path) is not None or read_status(path) is not None

    def copy_found(self, copy: Path, original: Path) -> None:
        """A prompt saved in a copy of `original`: merged back into it and answered there."""
        if self.copies.get(copy) != original:
            log.warning(
                "%s carries the session of %s, so it is a copy of it: merged into it, never run "
                "as a second conversation",
                copy,
                original.name,
            )
        self.copies[copy] = original
        self.on_conflict(copy)

    def on_conflict(self, copy: Path) -> None:
        """Merge a sync tool's conflict copy into its session document, once no turn runs."""
        original = original_of(copy) or self.copies.get(copy)
        if original is None:
            return
        doc = self.loop.docs.get(original)
        if not os.path.lexists(original) and os.path.lexists(copy):
            self._rebuild(copy, original, doc)
            return
        if doc is None:
            return  # not a conversation of ours: the copy is the person's business
        if doc.thread is not None or git_busy(original) or not self._quiet(copy):
            self.loop.after_settling(ConflictCopy(copy))
            return
        previous = doc.text
        text = take_in(copy, original, doc, self.loop.ledger)
        if copy in self.copies:
            if os.path.lexists(copy):
                why = f"a copy of {original.name} (it carries its session): not run; {HOLD_COPY}"
                hold(copy, why)
            else:
                self.copies.pop(copy)
        if text is not None:
            snap = capture.of_text(original, self.loop.settings, self.loop.ledger, text)
            known = Known("merged", doc.seen, previous, owes=self.loop.repairs.owes(original))
            self.act(original, doc, snap, known, classify(known, snap))

    def _quiet(self, copy: Path) -> bool:
        return time.time_ns() - changed_ns(copy) >= self.loop.settings.settle_step * 1e9

    def _rebuild(self, copy: Path, original: Path, doc: DocState | None) -> None:
        """The tool renamed every side of the document away: write it from its copies once
        they have settled and no turn writes (a turn streaming into it fails as it finds the
        document gone), then take it in like a merge: a prompt they bring is answered once."""
        copies = conflicts_of(original)
        if (doc is not None and doc.thread is not None) or not all(map(self._quiet, copies)):
            self.loop.after_settling(ConflictCopy(copy))
            return
        rebuilt = rebuild(original, copies, self.loop.ledger, answered=self._wrote(original))
        if rebuilt.problem is not None:
            log.warning("%s: %s; they stay in the folder", original, rebuilt.problem)
            return
        if rebuilt.text is None:
            return
        log.info(
            "%s: rebuilt from the sync tool's copies %s (kept in %s)",
            original,
            ", ".join(c.name for c in copies),
            None if rebuilt.kept is None else rebuilt.kept.parent,
        )
        doc = self.loop.docs.setdefault(original, DocState())
        previous = doc.text
        doc.seen, doc.text = digest(rebuilt.text.encode("utf-8")), rebuilt.text
        snap = capture.of_text(original, self.loop.settings, self.loop.ledger, rebuilt.text)
        known = Known("merged", doc.seen, previous, owes=self.loop.repairs.owes(original))
        self.act(original, doc, snap, known, classify(known, snap))

    def _look(self, path: Path, doc: DocState, data: bytes, known: Known) -> None:
        """Take `data`, just read, as the version the daemon knows, and act on it."""
        snap = capture.of_bytes(path, self.loop.settings, self.loop.ledger, data, settled=False)
        doc.seen, doc.text = snap.digest, snap.loose_text
        self.act(path, doc, snap, known, classify(known, snap))
