"""One document's turn as the daemon keeps it: its state between saves, its thread's body, and
what a turn that did not finish leaves to look at.

The daemon's loop owns every `DocState`; a turn thread only runs `run_turn` and reports back
through the loop's queue, so no state here is shared between threads.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.daemon.events import TurnEnded
from agentdoc.daemon.notices import hold, replaced
from agentdoc.daemon.watch import read_stable
from agentdoc.document import digest
from agentdoc.errors import AgentdocError, NoPendingPrompt, ReadOnlyDocument
from agentdoc.turn import TurnRunner

log = logging.getLogger(__name__)

SAVES_KEPT = 8


@dataclass
class DocState:
    seen: str | None = None  # digest of the last content handled
    text: str | None = None  # that content, to tell a typed prompt from a bulk rewrite
    # Recent contents someone else saved (not our own writes): the copies an editor may hold,
    # the bases to merge a save made from one of them with what we wrote since.
    saves: deque[str] = field(default_factory=lambda: deque(maxlen=SAVES_KEPT))
    # A save taken while the turn ran: in `saves` already, but not yet judged as a save.
    queued_save: str | None = None
    thread: threading.Thread | None = None
    runner: TurnRunner | None = None
    cancel: threading.Event | None = None
    queued: bool = False  # a prompt was saved while the turn streamed
    prompt_below: bool = False  # …below the streaming reply: a cancel does not drop it
    waiting: bool = False  # submitted, waiting for a free slot
    prompt: str | None = None  # the prompt of the turn last submitted
    refused: bool = False  # its frontmatter could not be read: the status says why
    indexed: str | None = None  # digest of the version last handed to the search index
    own_taken: str | None = None  # digest of the last `undo`/`archive` version taken in
    locked: bool = False  # its turn was refused for the file's read-only mode


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
    doc.thread = threading.Thread(target=body, daemon=True)
    doc.thread.start()


def after_unfinished(path: Path, doc: DocState, outcome: str) -> bool:
    """Take in the file a turn that did not finish left; True if another document took its
    place (deleted and created anew while the reply streamed)."""
    # The save that deleted the streaming block (or the cancel request) is not a new
    # submission, even though the prompt is pending again; nor is a prompt that a failed turn
    # left pending: it is sent again on the user's next save.
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
