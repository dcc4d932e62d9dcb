"""Per-document state files under ``.agentdoc/``: the editor-facing protocol (docs/protocol.md).

``.agentdoc/<document name>.status.json`` says what agentdoc is doing with a document; an editor
or plugin may read it at any time (it is replaced atomically). Creating
``.agentdoc/<document name>.cancel`` asks for the running turn to stop; agentdoc deletes it.
A document name too long to take a suffix is shortened with a hash (:func:`state_file`); the
status file's ``document`` field always holds the full name.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from agentdoc.document import atomic_write, fitting_name, shown_name
from agentdoc.localstate import make_state_folder, state_folder, state_folders

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
# "pending": a prompt waits in the document but was not sent (it was there when the daemon
# started); the next save of the document sends it.
# "waiting": the turn waits for the person to answer a tool permission request (`waiting_for`).
State = Literal["idle", "pending", "queued", "streaming", "waiting", "error"]


class Status(BaseModel):
    version: int = PROTOCOL_VERSION
    document: str
    state: State
    turn: int | None = None
    session: str | None = None
    started: str | None = None  # ISO 8601, when the current/last turn started
    updated: str
    tokens: int = 0  # output tokens so far (estimated while streaming)
    tokens_estimated: bool = True  # False once `tokens` is the CLI's own count (turn ended)
    cost_usd: float | None = None  # the last turn's own cost, when the agent reported one
    error: str | None = None
    pid: int | None = None  # the agentdoc process working on the document
    waiting_for: str | None = None  # the tool whose permission request waits for an answer
    held: str | None = None  # while `pending`: why the prompt was not sent, and how to send it
    queued: bool = False  # while a reply streams: a prompt saved below it waits for its end
    place: int | None = None  # while `queued` for a free turn: its place in line, 1 the next
    # Tokens in the model's context window after the last turn, and the window, when the agent
    # reports them (kept from turn to turn until a new figure arrives).
    context_used: int | None = None
    context_size: int | None = None

    def describe(self, name: str | None = None) -> str:
        """One line for `agentdoc status`; `name` shows the document (say, with its folder)."""
        line = f"{name or self.document}: {self.state}"
        if self.turn:
            about = "~" if self.tokens_estimated else ""
            cost = f", ${self.cost_usd:.3f}" if self.cost_usd else ""
            line += (
                f" (turn {self.turn}, {about}{self.tokens} tokens{cost}, updated {self.updated})"
            )
        if self.context_used and self.context_size:
            share = 100 * self.context_used / self.context_size
            line += f" — context {self.context_used:,}/{self.context_size:,} tokens ({share:.0f}%)"
        if self.waiting_for:
            line += f" — {self.waiting_for} waits for your answer (`agentdoc approve` / `deny`)"
        if self.queued:
            line += " — queued: a prompt saved below it is sent when it ends"
        if self.state == "queued" and self.place:
            line += f" — {ordinal(self.place)} in line for a turn (the others use every slot)"
        if self.held:
            line += f" — {self.held}"
        if self.error:
            line += f" — {self.error}"
        return line


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th… 11th, 12th, 13th, 21st."""
    teen = 10 <= number % 100 <= 20
    return f"{number}{'th' if teen else {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th')}"


def state_dir(document: Path) -> Path:
    """The `.agentdoc/` folder of `document`: beside it, or out of the sync in a synced
    folder (`agentdoc.localstate`)."""
    return state_folder(document.parent)


def make_state_dir(folder: Path) -> None:
    """Create a state folder (if missing) that ignores itself."""
    make_state_folder(folder)


def state_file(document: Path, suffix: str) -> Path:
    """`.agentdoc/<document name><suffix>`, shortened when the name would be too long."""
    return state_dir(document) / fitting_name(document.name, suffix)


# The per-document state files that mean nothing once the document is gone. The journal is
# kept: it holds the only copy of a reply that could not be written, until it is closed.
STATE_SUFFIXES = (
    ".status.json",
    ".history.md",
    ".turns.json",
    ".approval.json",
    ".answer.json",
    ".cancel",
    ".written.json",
    ".reasons.json",
)


def status_path(document: Path) -> Path:
    return state_file(document, ".status.json")


def cancel_path(document: Path) -> Path:
    return state_file(document, ".cancel")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_status(document: Path, status: Status) -> bool:
    """Replace the status file; False (logged) when it cannot be written."""
    path = status_path(document)
    try:
        make_state_dir(path.parent)
        # Not durable: a status is shown, never the only copy of anything (recovery writes
        # the status of a turn a crash cut short), and a turn writes several.
        data = (_storable(status).model_dump_json(indent=2) + "\n").encode()
        atomic_write(path, data, durable=False)
    except OSError as exc:
        # A read-only folder must not stop the turn itself; the document still gets the reply.
        log.warning("cannot write status file %s: %s", path, exc)
        return False
    return True


def _storable(status: Status) -> Status:
    """`status` with text JSON can hold: a name or message carrying bytes that are not UTF-8
    (a document named in an old encoding) is written with escapes, not refused."""
    escaped = {
        key: value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        for key, value in status
        if isinstance(value, str) and not value.isascii()
    }
    escaped["document"] = shown_name(status.document)
    return status.model_copy(update=escaped)


def read_status(document: Path) -> Status | None:
    try:
        return Status.model_validate_json(status_path(document).read_bytes())
    except (OSError, ValidationError, json.JSONDecodeError):
        return None


def all_statuses(root: Path) -> list[Status]:
    """The status of every document under `root` that still exists (a status file left by a
    document deleted or renamed while no daemon watched it describes nothing)."""
    return [current for _folder, current in folder_statuses(root)]


def folder_statuses(root: Path) -> list[tuple[Path, Status]]:
    """`all_statuses` with the folder each document is in."""
    found: list[tuple[Path, Status]] = []
    for folder, state in sorted(state_folders(root)):
        for path in sorted(state.glob("*.status.json")):
            try:
                current = Status.model_validate_json(path.read_bytes())
            except (OSError, ValidationError):
                log.debug("unreadable status file %s", path)
                continue
            if _document_exists(folder, current.document):
                found.append((folder, current))
    return found


def _document_exists(folder: Path, shown: str) -> bool:
    """Whether the document a status file names is still in `folder`; the status holds the
    name as shown (escaped), so a name that needed escapes is looked for among the files."""
    if (folder / shown).exists():
        return True
    try:
        return any(shown_name(p.name) == shown != p.name for p in folder.iterdir())
    except OSError:
        return False


def remove_state(document: Path) -> None:
    """Remove what `.agentdoc/` keeps for a document that no longer exists."""
    for suffix in STATE_SUFFIXES:
        try:
            state_file(document, suffix).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            log.debug("cannot remove %s: %s", exc.filename, exc.strerror)


def request_cancel(document: Path) -> Path:
    path = cancel_path(document)
    make_state_dir(path.parent)
    path.write_text(f"{os.getpid()}\n")
    return path


def take_cancel_request(document: Path) -> bool:
    """True (and the request is consumed) if someone asked to cancel this document's turn."""
    try:
        cancel_path(document).unlink()
    except FileNotFoundError:
        return False
    return True


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return True


def live_turn(document: Path) -> Status | None:
    """The status of a turn another live process is streaming into `document`, if any."""
    current = read_status(document)
    if current is None or current.state not in ("streaming", "waiting") or not current.pid:
        return None
    if current.pid == os.getpid() or not pid_alive(current.pid):
        return None
    return current


INTERRUPTED = "the reply was interrupted: agentdoc stopped before it finished"


def is_stale(current: Status) -> bool:
    """A status that says a turn runs, written by a process that is not running one.

    Its pid has ended, or it is this process's own (the caller knows it runs no turn there).
    """
    if current.state not in ("streaming", "waiting", "queued"):
        return False
    return not current.pid or current.pid == os.getpid() or not pid_alive(current.pid)


def as_found(current: Status) -> Status:
    """What a status says, told as it is: a turn whose process has ended is not streaming."""
    if current.state in ("streaming", "waiting") and current.pid and not pid_alive(current.pid):
        return current.model_copy(
            update={"state": "error", "error": f"{INTERRUPTED} (pid {current.pid} is gone)"}
        )
    return current


def clear_dead_turn(document: Path, error: str | None = None) -> bool:
    """A status still saying a turn streams, from a process that died (or from this one, which
    runs no turn there): say what happened. False only when that could not be written."""
    current = read_status(document)
    if current is None or not is_stale(current):
        return True
    return write_status(
        document,
        current.model_copy(
            update={
                "state": "error",
                "error": error or INTERRUPTED,
                "pid": None,
                "waiting_for": None,
                "updated": now_iso(),
            }
        ),
    )


class StatusReporter:
    """Keeps one document's status file in step with its running turn."""

    def __init__(self, document: Path) -> None:
        self.document = document
        self.status = Status(document=document.name, state="idle", updated=now_iso())
        self._lock = threading.Lock()  # the daemon's thread may note a queued prompt

    def note_queued(self) -> None:
        """A prompt was saved below the running reply: say so now, not at the next report."""
        with self._lock:
            if self.status.state not in ("streaming", "waiting") or self.status.queued:
                return
            self.status = self.status.model_copy(update={"queued": True})
            write_status(self.document, self.status)

    def report(
        self,
        turn: int,
        state: str,
        chars: int,
        session_id: str | None,
        detail: str,
        tokens: int | None = None,
        context: tuple[int | None, int | None] = (None, None),
        cost_usd: float | None = None,
    ) -> None:
        """Record a turn state (a runner state such as "retrying", shown as a status state).

        `tokens` is the CLI's own output count and `cost_usd` the turn's own cost, known when
        the turn ends; until then the count is estimated from the characters streamed so far.
        `context` (tokens used, the window) replaces the last known figures when the agent
        reported them.
        """
        with self._lock:
            self._report(turn, state, chars, session_id, detail, tokens, context, cost_usd)

    def _report(
        self,
        turn: int,
        state: str,
        chars: int,
        session_id: str | None,
        detail: str,
        tokens: int | None,
        context: tuple[int | None, int | None],
        cost_usd: float | None,
    ) -> None:
        previous = self.status
        now = now_iso()
        shown: State = (
            "waiting"
            if state == "waiting"
            else "streaming"
            if state in ("starting", "streaming", "retrying")
            else "error"
            if state in ("failed", "interrupted")
            else "idle"
        )
        # Streaming progress is rewritten at most about once a second; state changes at once.
        if shown == previous.state == "streaming" and previous.updated == now:
            return
        self.status = previous.model_copy(
            update={
                "state": shown,
                "turn": turn,
                "session": session_id or previous.session,
                "started": now if state == "starting" else previous.started,
                "updated": now,
                "tokens": chars // 4 if tokens is None else tokens,
                "tokens_estimated": tokens is None,
                "cost_usd": cost_usd,
                "error": (detail or None) if shown == "error" else None,
                "pid": os.getpid() if shown in ("streaming", "waiting") else None,
                "waiting_for": (detail or None) if shown == "waiting" else None,
                "queued": previous.queued and shown in ("streaming", "waiting"),
                "context_used": context[0] or previous.context_used,
                "context_size": context[1] or previous.context_size,
            }
        )
        write_status(self.document, self.status)
