"""What the daemon finds at start-up: the documents a walk of the tree turns up, read once.

A document is remembered as it stands, without sending its prompt (unless asked to): a prompt
already waiting when the daemon started is told in its status, to be sent by the next save.
In a synced folder or a `git: sync` document the person who wrote it may be on another device
(a phone) with no way to "save it again" here, so there a prompt that arrived while the daemon
was down is sent once, through the gate like any other (an untrusted folder still holds it):
unless this machine's turn records say its turn already ran, or git checked that version out.
Replies a killed process left open are closed first, so the state remembered is a clean one.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from agentdoc.daemon.classify import Known, classify
from agentdoc.daemon.conflicts import conflicts_of
from agentdoc.daemon.events import Changed, ConflictCopy, Unsent
from agentdoc.daemon.hints import Hints
from agentdoc.daemon.notices import as_argument, hold, tell_error
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.synced.gitguard import written_by_git
from agentdoc.daemon.syncing import Act
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.tree import maybe_session, starts_as_session, times_ns
from agentdoc.document import (
    WriteLedger,
    decode,
    digest,
    is_session_document,
    read_bytes,
    session_problem,
    shown_name,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import Status, clear_dead_turn, live_turn, read_marks, read_status, recover

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    data: bytes
    text: str
    mtime: int  # read before the content, so a save made meanwhile counts as one
    session: bool  # False: it means to be a session document but is not a valid one
    # When it last changed here, also read first: the later of mtime and ctime, so a file a
    # sync tool delivered with the sender's older mtime counts as arriving when it did.
    arrived: int = 0


def read_found(
    path: Path,
    ledger: WriteLedger,
    elsewhere: Callable[[Path], bool] = lambda _p: False,
    plain: Callable[[Path], bool] = lambda _p: False,
) -> Found | None:
    """The document at `path` as start-up finds it, or None when it is no session document;
    `elsewhere`: another machine answers it, so a reply open in it is that machine's; `plain`:
    a note already read and found none, unchanged since (`Glance.still_plain`)."""
    if plain(path) or not starts_as_session(path):
        return None  # most notes of a vault: no more than that one read
    mtime, arrived = times_ns(path)  # before the read, so a save after it is seen as new
    data = read_stable(path)
    if data is None or not maybe_session(data):
        return None
    text = decode(path, data)
    if not is_session_document(text):
        return Found(data, text, mtime, session=False, arrived=arrived)
    if live_turn(path) is None and not elsewhere(path):
        # Replies left open by a killed process; one a live `agentdoc run` is still streaming
        # is left alone.
        if recover(path, ledger):
            data = read_bytes(path)
            text = decode(path, data)
        clear_dead_turn(path)
    return Found(data, text, mtime, session=True, arrived=arrived)


def tell_unsent(path: Path) -> None:
    """Say so when a prompt already waiting at start-up is left unsent (not a surprise send,
    not a silent skip)."""
    log.warning(
        "%s has an unsent prompt; save it again or run `agentdoc run %s`",
        shown_name(path.name),
        shown_name(str(path)),
    )
    hold(
        path,
        "the prompt was already there when agentdoc watch started; save the document "
        f"again or run `agentdoc run {as_argument(path.name)}` to send it",
    )


def ran_here(turn: int, status: Status | None, marks: Collection[int]) -> bool:
    """Whether this machine's records say turn `turn` was already run: its status names it
    (or a later one), or a turn's mark does. A prompt they cover is an old one come back
    (a checkout, a sync tool's older version), or one whose turn failed: the person decides
    whether to send it again."""
    return (status is not None and (status.turn or 0) >= turn) or any(t >= turn for t in marks)


def take(found: queue.SimpleQueue[Path], most: int) -> list[Path]:
    """Up to `most` paths the walk has found, without waiting for more."""
    paths: list[Path] = []
    while len(paths) < most:
        try:
            paths.append(found.get_nowait())
        except queue.Empty:
            break
    return paths


# A file's times come from the kernel's coarse clock, up to a tick behind the time of day: a save
# made just after the watch began may carry a time before it, and has its event. Only a change
# clearly before the watch began is taken as one no event will tell (a save taken early would
# cut short the settling of an editor's burst of saves).
CLOCK_TICK_NS = 50_000_000


@dataclass
class Discovery:
    """What each document the first walk finds holds, remembered as the loop's state, and a
    prompt found waiting told (sent only with `send_pending`). A part the `Daemon` is composed
    of: it runs on the loop's thread, between events, and works on the loop's state (`Loop`)."""

    loop: Loop
    hints: Hints
    follow: Callable[[Path], None]  # the watcher's rescan looks at it one by one
    act: Act
    poll: bool
    send_pending: bool
    started_ns: int = 0  # a file changed since then was saved by someone: its event follows
    # A file changed between these two was saved once the daemon could be found (`agentdoc
    # ask` hands its prompt over) but before its watch began (start-up's glance at the notes
    # comes first): no event follows, so the change is taken as the save it was.
    locked_ns: int = 0
    observed_ns: int = 0
    plain: Callable[[Path], bool] = lambda _p: False  # see `read_found`

    def look(self, path: Path) -> None:
        """Remember what the document at `path` holds at start-up; send nothing unless asked
        to. (The loop guards each path: one document must not keep the others from start-up.)"""
        if path in self.loop.docs:
            return  # saved since start-up, and handled as a save
        try:
            self.one(path)
        except AgentdocError as exc:
            self.error(path, str(exc))

    def error(self, path: Path, message: str) -> None:
        tell_error(path, message, self.loop.on_progress)

    def one(self, path: Path) -> None:
        found = read_found(path, self.loop.ledger, self.loop.gate.answered_elsewhere, self.plain)
        if found is None:
            return
        if not found.session:
            self._refuse(path, found.text)
            return
        # A file written since the watch began was saved by someone, and its event is on its
        # way: left unseen, that event counts as the save it is.
        fresh = found.arrived >= self.started_ns
        # Read once: the settings, the prompt and (if asked) the decision come from this value.
        snap = Snapshot(path, self.loop.settings, found.data, digest(found.data))
        doc = self.loop.docs.setdefault(path, DocState())
        doc.seen, doc.text = (None if fresh else snap.digest), found.text
        doc.saves.append(found.text)
        self.follow(path)
        self.hints.found_at_start(path, found.mtime)
        for copy in conflicts_of(path):  # made while no daemon watched
            self.loop.put(ConflictCopy(copy))
        unheard = self.locked_ns <= found.arrived < self.observed_ns - CLOCK_TICK_NS
        if fresh and (self.poll or unheard):
            # Polling compares later looks with the walk, which already saw this version;
            # a save before the watch began was not observed: no event is on its way, so the
            # save is taken as it is now (should one come after all, it changes nothing).
            self.loop.put(Changed(path))
        elif self.send_pending:
            self.act(path, doc, snap, Known("found"), classify(Known("found"), snap))
        elif (problem := snap.settings_problem) is not None:
            # Settings that fail validation are told now, not found out at the next save.
            self.error(path, f"{shown_name(path.name)}: {problem}")
        elif snap.prompt is not None and self._answers_at_start(path, snap):
            self.act(path, doc, snap, Known("found"), classify(Known("found"), snap))
        elif snap.prompt is not None:
            # The next save of it sends it, even an unchanged one.
            doc.seen = None
            if fresh:
                # Its save's event is on its way (`agentdoc ask` as the daemon starts), or was
                # lost as the watch began: it is told only if no save has been handled by the
                # time one would have settled.
                settings = self.loop.settings
                self.loop.deadlines.add(settings.settle_max + settings.settle_step, Unsent(path))
            else:
                tell_unsent(path)

    def unsent(self, path: Path) -> None:
        """The look `one` put off for a prompt in a fresh file: no save of it was handled since
        (no turn ran, nothing was taken in), so the prompt is told as waiting."""
        doc = self.loop.docs.get(path)
        if doc is not None and doc.thread is None and doc.seen is None:
            tell_unsent(path)

    def _answers_at_start(self, path: Path, snap: Snapshot) -> bool:
        """Whether a prompt found waiting is sent now (the module's docstring says when)."""
        if snap.document is None or snap.data is None:
            return False
        if not snap.git_sync and self.loop.gate.synced_root(path) is None:
            return False
        turn = snap.document.turn_count() + 1
        if ran_here(turn, read_status(path), read_marks(path).keys()):
            return False
        # With `git: sync` git bringing the remote's commits in is how a prompt arrives.
        return snap.git_sync or not written_by_git(path, snap.data)

    def _refuse(self, path: Path, text: str) -> None:
        """Say why a document that means to be a session document cannot be used."""
        problem = session_problem(text)
        if problem is None:
            return
        self.loop.docs.setdefault(path, DocState()).refused = True
        self.error(path, f"{path.name}: {problem}. Fix it and save; until then it is left alone")
