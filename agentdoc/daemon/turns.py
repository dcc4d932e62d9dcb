"""The daemon's turns, from a due prompt to the look after their end: each started on its own
thread (or queued for a free slot), its end taken in, a turn that did not finish looked at, and
a document gone forgotten.

`Turns` is a part the `Daemon` is composed of. Like the rest of the loop it runs on the loop's
thread and works on the loop's state (`Loop`); a turn's thread only runs `run_turn` and reports
its end back through the loop's queue.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.agents import start_turn
from agentdoc.daemon.events import Changed, Recheck, TurnEnded
from agentdoc.daemon.notices import hold, replaced, tell_error, tell_queued
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.state import DocState, Loop
from agentdoc.daemon.synced.pace import paced
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.document import Document, check_writable, digest, parsed_or_none
from agentdoc.errors import AgentdocError, NoPendingPrompt, ReadOnlyDocument
from agentdoc.records import remove_state
from agentdoc.search import note_changed
from agentdoc.turn import TurnRunner

log = logging.getLogger(__name__)


@dataclass
class Turns:
    loop: Loop
    environ: Mapping[str, str] | None
    pool: WarmPool | None
    max_concurrent: int
    # Documents whose prompt waits for a free slot, in the order their prompts were due.
    line: list[Path] = field(default_factory=list)

    def running(self) -> int:
        return sum(1 for d in self.loop.docs.values() if d.thread is not None)

    def submit(
        self, path: Path, marker: bool, prompt: str | None = None, parsed: Document | None = None
    ) -> None:
        """Start the turn for `path`'s prompt, or queue it until a turn ends."""
        doc = self.loop.docs.setdefault(path, DocState())
        doc.prompt = prompt
        if self.running() >= self.max_concurrent:
            if path not in self.line:
                self.line.append(path)
            tell_queued(path, self.line.index(path) + 1, self.loop.on_progress)
            return
        doc.cancel = threading.Event()
        self.loop.gate.started(path)
        runner = TurnRunner(
            path,
            paced(path, self.loop.settings),
            clear=self.loop.gate.clearer(path),
            mode="run",
            ledger=self.loop.ledger,
            environ=self.environ,
            on_progress=self.loop.on_progress,
            cancel=doc.cancel,
            require_marker=marker,
            launcher=self.pool.launcher(path) if self.pool is not None else start_turn,
            notice_start_failure=True,
            parsed=parsed,
        )
        begin(path, doc, runner, self.error, self.loop.put)

    def on_done(self, path: Path, outcome: str, failure: str | None) -> None:
        """Take in the end of `path`'s turn."""
        doc = self.loop.docs.get(path)
        if doc is None:
            return
        doc.thread = doc.cancel = doc.runner = None
        queued, doc.queued, doc.prompt_below = doc.prompt_below, False, False
        if not path.exists():
            self.gone(path, doc)
        elif outcome != "done":
            note_changed(path)  # the prompt, in the search index
            # What the turn could not write (its close, its status) is owed until it can be.
            self.loop.repairs.owe(path, failure)
            mended = self.mend(path)
            saved = not mended and outcome in SAVE_ANSWERS and self._saved_since_close(path, doc)
            doc.locked = outcome == "read-only" and not writable(path)
            if after_unfinished(path, doc, outcome, reread=not (mended or saved)) or saved:
                self.loop.after_settling(Changed(path))
            elif outcome == "read-only" and not doc.locked:
                # Made writable before this end was taken in: its prompt is due now.
                self.loop.after_settling(Recheck(path, doc.begun))
            elif queued and outcome in ("cancelled", "interrupted"):
                # A cancel ends the reply, not the prompt saved below it: sent as queued.
                self.loop.after_settling(Recheck(path, doc.begun))
            elif outcome in SAVE_ANSWERS and typed_below_end(doc.text):
                # Saved while the turn wrote its end, and merged into that write: the file, and
                # the save's own event, read as ours. Looked at once more, as after a reply.
                self.loop.after_settling(Recheck(path, doc.begun))
        elif (data := read_stable(path)) is not None:
            self._after_reply(path, doc, data)

    def _saved_since_close(self, path: Path, doc: DocState) -> bool:
        """Whether the person saved after the turn wrote its end (the resend typed the moment
        the failure showed); the document is then known as that end left it, so the save is
        judged as any save is, against it. Taken from the file instead, it would be taken in
        unseen, and its prompt never sent."""
        ours = self.loop.ledger.last(path)
        data = read_stable(path)
        if ours is None or data is None or self.loop.ledger.is_own(path, data):
            return False
        doc.seen, doc.text = digest(ours), ours.decode("utf-8", "replace")
        return True

    def unlocked(self, path: Path) -> bool:
        """True once a document whose turn was refused as read-only is writable again (a
        `chmod`): the prompt its save asked for is due, and the refusal no longer holds."""
        doc = self.loop.docs.get(path)
        if doc is None or not doc.locked or doc.thread is not None or not writable(path):
            return False
        doc.locked = False
        return True

    def next_in_line(self) -> Path | None:
        """The document whose turn is due now that a slot is free (None: none, or no slot);
        those behind it are told their new place."""
        if not self.line or self.running() >= self.max_concurrent:
            return None
        due = self.line.pop(0)
        for place, path in enumerate(self.line, 1):
            tell_queued(path, place, self.loop.on_progress)
        return due

    def _after_reply(self, path: Path, doc: DocState, data: bytes) -> None:
        if not self.loop.ledger.is_own(path, data) and (ours := self.loop.ledger.last(path)):
            # Saved after our last write, maybe from a copy older than the reply: a save like
            # any other, judged against what we wrote.
            doc.seen, doc.text = digest(ours), ours.decode("utf-8", "replace")
            self.loop.after_settling(Changed(path))
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
        self.loop.after_settling(Recheck(path, doc.begun))

    def mend(self, path: Path) -> bool:
        """Close a reply no turn owns and correct a stale status; True if the file changed."""
        doc = self.loop.docs.get(path)
        if doc is not None and doc.thread is not None:
            return False  # its own turn is running: nothing there is stale
        if self.loop.gate.answered_elsewhere(path):
            return False  # another machine streams into it, and closes it
        if not self.loop.repairs.mend(path):
            return False
        if doc is not None and (ours := self.loop.ledger.last(path)) is not None:
            # Known at once, not when the write's event comes: a save landing within the same
            # settle step (the person typing the next prompt) is judged against the closed
            # reply, not taken for several turns arriving at once.
            doc.seen, doc.text = digest(ours), ours.decode("utf-8", "replace")
        return True

    def gone(self, path: Path, doc: DocState) -> None:
        """Forget a document deleted or renamed away, once no turn writes into it."""
        if doc.thread is not None:
            log.error("%s: deleted or renamed while a reply was streaming", path)
            return  # its state files go when the turn has ended
        self.loop.docs.pop(path, None)
        if path in self.line:
            self.line.remove(path)
        self.loop.repairs.forget(path)
        self.loop.gate.forget(path)
        remove_state(path)
        if self.pool is not None:
            self.pool.forget(path)

    def error(self, path: Path, message: str) -> None:
        tell_error(path, message, self.loop.on_progress)


def writable(path: Path) -> bool:
    try:
        check_writable(path)
    except AgentdocError:
        return False
    return True


def run_turn(
    path: Path, runner: TurnRunner, tell: Callable[[Path, str], None]
) -> tuple[str, str | None]:
    """Run one turn on its own thread: how it ended, and the failure it told, if any."""
    try:
        result = runner.run()
    except NoPendingPrompt:
        log.debug("%s: the prompt was gone by the time the turn started", path)
    except ReadOnlyDocument as exc:
        tell(path, str(exc))
        return "read-only", str(exc)  # sent once a `chmod` makes it writable
    except AgentdocError as exc:
        tell(path, str(exc))  # logs it too: once per failure, not twice
        return "failed", str(exc)
    except Exception as exc:
        log.exception("%s: the turn failed unexpectedly", path)
        tell(path, f"unexpected error: {exc}")
    else:
        # "held": a prompt-looking text the user typed while the reply streamed waits for a
        # save of theirs; it is handled like a prompt left pending by a failure.
        return ("held" if result.held else result.state), None
    return "failed", None


def begin(
    path: Path,
    doc: DocState,
    runner: TurnRunner,
    tell: Callable[[Path, str], None],
    ended: Callable[[TurnEnded], None],
) -> None:
    """Run `runner`'s turn on its own thread; its end comes back as a `TurnEnded` event."""

    def body() -> None:
        outcome, failure = "failed", None
        try:
            outcome, failure = run_turn(path, runner, tell)
        finally:
            ended(TurnEnded(path, outcome, failure))

    doc.runner = runner
    doc.begun += 1
    doc.thread = threading.Thread(target=body, daemon=True)
    doc.thread.start()


# Ends whose document a save after them may resend: the failure notice, or the interrupted reply
# closed, is the turn's own last write. A cancel is not among them: the save that deleted the
# streaming reply is what ended it, and is no new submission.
SAVE_ANSWERS = frozenset({"failed", "interrupted", "error"})


def typed_below_end(text: str | None) -> bool:
    """Whether a failed turn's end (as the file now holds it) has a prompt below it. The end
    leaves none: its own prompt stays pending above a failure notice, or, below partial text,
    a new `## User` heading stays empty until the person writes under it."""
    parsed = None if text is None else parsed_or_none(text)
    if parsed is None:
        return False
    return parsed.unanswered() is None and parsed.pending_prompt() is not None


def after_unfinished(path: Path, doc: DocState, outcome: str, *, reread: bool = True) -> bool:
    """Take in the file a turn that did not finish left; True if another document took its
    place (deleted and created anew while the reply streamed). Without `reread`, the version
    known is the close the daemon itself just wrote (`Turns.mend`): a save made since, read
    here, would be taken in unseen and its prompt never sent."""
    # The save that deleted the streaming block (or the cancel request) is not a new
    # submission, even though the prompt is pending again; nor is a prompt that a failed turn
    # left pending: it is sent again on the user's next save.
    if reread:
        data = read_stable(path)
        doc.seen = digest(data) if data is not None else None
        doc.text = data.decode("utf-8", "replace") if data is not None else None
    if outcome == "held":
        hold(path, "typed while the reply streamed: save the document to send it")
    if doc.text is None or not replaced(doc.text, doc.prompt):
        return False
    # A new document, whose prompt follows the rules for a new document.
    log.info("%s: a new document took the place of the one answered", path)
    doc.seen = doc.text = None
    return True


def take_own(path: Path, doc: DocState, text: str, command: str, pending: bool) -> None:
    """A version another agentdoc command wrote (`undo`, `archive`): the conversation as it
    now stands, changed on purpose, not a bulk change; a prompt it leaves pending (the one
    whose reply `undo` took back) waits for the person's edit and save. Not for any save: the
    same version seen again (a late event of this very write) must not send it."""
    doc.text = text
    if pending:
        why = f"pending again after `agentdoc {command}`: edit the prompt and save to send it"
        log.info("%s: %s", path, why)
        hold(path, why)


def stop_turns(docs: Mapping[Path, DocState], grace: float) -> None:
    """Cancel every running turn, then give each `grace` seconds to write its end."""
    running = [(path, doc) for path, doc in docs.items() if doc.thread is not None]
    for _, doc in running:
        assert doc.cancel is not None
        doc.cancel.set()
    for path, doc in running:
        assert doc.thread is not None
        doc.thread.join(grace)
        if doc.thread.is_alive():
            log.error("%s: the turn did not stop in time", path)
