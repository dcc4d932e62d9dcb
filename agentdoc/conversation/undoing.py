"""``agentdoc undo``: take the last N completed turns back — replies, file changes, the session's
memory of them.

In this order, so a refusal or a failure leaves everything as it was:

1. Check: no turn streams, there are N completed exchanges in the document, no prompt waits
   below the last.
2. Files (`undofiles`): every file the turns created, changed or deleted comes back from the
   snapshots taken around each turn, whatever changed it; a file someone changed after the turn
   that wrote it refuses the undo, naming it, unless forced.
3. The document: the replies leave, from the first undone turn's reply on, so that turn's prompt
   is pending again (the daemon sees turns disappear and does not send it until the person
   saves it); the later prompts are kept in ``.agentdoc/<name>.undone.md``. The session forgets
   the turns: ``agentdoc.resume_at`` names the end of the turn before, where the next prompt
   forks the session; with no such mark (an agent that cannot go back in its own session) the
   next prompt starts a new session seeded with the transcript (or, after undoing the first
   turn, a plain new one).
4. With git per turn on, a commit that says so.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from agentdoc.agents import TurnMark, branch_point
from agentdoc.config import Settings
from agentdoc.document import (
    STREAMING_MARK,
    Document,
    DocumentError,
    FrontmatterError,
    archive_path,
    atomic_write,
    digest,
    dominant_newline,
    drop_thinking,
    is_unanswered,
    parse,
    read_text,
    set_meta,
    write_text,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import (
    Snapshot,
    archived_transcript,
    files_to_restore,
    joined,
    live_turn,
    note_own_write,
    own_write,
    read_marks,
    state_file,
    undo_marks,
    write_snapshot,
)
from agentdoc.records import forget as forget_snapshots
from agentdoc.turn import Clearer, commit_undo, working_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Undone:
    turn: int  # the first turn taken back
    restored: bool  # files were put back
    committed: bool
    count: int = 1
    files: int = -1  # how many files were written or removed (-1: the agent did it, unknown)


def check_undo(path: Path, text: str, doc: Document, count: int = 1, again: bool = False) -> int:
    """The last exchange to take back, or AgentdocError saying why there is none. ``again``:
    the document is as an earlier undo left it, so its pending prompt is that undo's."""
    if STREAMING_MARK in text or live_turn(path) is not None:
        raise AgentdocError(
            f"{path}: a reply is streaming into it; cancel it (`agentdoc cancel {path}`) or wait "
            "for it to finish, then undo"
        )
    last = doc.turn_count()
    archived = doc.meta.archived or 0
    if last == 0:
        raise AgentdocError(f"{path}: nothing to undo; it has no completed exchange")
    if last == archived:
        raise AgentdocError(
            f"{path}: nothing to undo in the document; turn {last} is in its archive "
            f"({archive_path(path).name})"
        )
    if count > last - archived:
        where = f" (turns 1-{archived} are in its archive)" if archived else ""
        raise AgentdocError(
            f"{path}: cannot undo {count} turns; the document holds {last - archived}{where}"
        )
    if doc.pending_prompt() is not None and not again:
        raise AgentdocError(
            f"{path}: a prompt waits below the last reply; send it or remove it before undoing "
            f"turn {last}"
        )
    return last


def _cut(doc: Document, count: int) -> tuple[int, int]:
    """Indexes in ``doc.turns`` of the first reply taken out and of the last reply."""
    replies = [i for i, t in enumerate(doc.turns) if t.role == "assistant"]
    answered = [i for i in replies if not is_unanswered(doc.turns[i])]
    return (answered[-count] if count > 1 else replies[-1]), replies[-1]


def undone_text(doc: Document, count: int = 1) -> str:
    """``doc`` without its last ``count`` replies, so the first of their prompts is pending
    again (pure). A prompt already pending below them (an earlier undo's) goes with them."""
    index, last = _cut(doc, count)
    nl = dominant_newline(doc.text)
    head = doc.text[: doc.turns[index].start].rstrip()
    # After the last reply comes the next `## User`: empty but for HTML comments (scratchpad),
    # which stay, or an earlier undo's prompt, which `taken_out` keeps.
    notes = "".join(t.content for t in doc.turns[last + 1 :]).strip()
    if doc.pending_prompt() is not None:
        notes = ""
    return f"{head}{nl}{nl}{notes}{nl}" if notes else f"{head}{nl}"


def taken_out(doc: Document, count: int) -> str:
    """The prompts (and replies) after the first undone prompt that `undone_text` leaves out
    (pure): none when only the last reply goes, taking it out being the point."""
    pending = doc.pending_prompt() is not None
    if count < 2 and not pending:
        return ""
    index, last = _cut(doc, count)
    tail = last + 1 < len(doc.turns) and not pending
    end = doc.turns[last + 1].start if tail else len(doc.text)
    return doc.text[doc.turns[index].start : end]


def forget(turn: int, before: tuple[str, str] | None) -> dict[str, Any]:
    """The ``agentdoc:`` updates that make the next prompt continue from turn ``turn - 1``:
    from the end of that turn in its session (``before``), else in a new session."""
    if turn > 1 and before is not None:
        session, end = before
        return {"session": session, "resume_at": end}
    return {"session": None, "resume_at": None}


def _before(mark: TurnMark | None, cwd: Path, environ: Mapping[str, str]) -> tuple[str, str] | None:
    return None if mark is None else branch_point(environ, mark, cwd)


def undo(
    path: Path,
    settings: Settings,
    environ: Mapping[str, str] | None = None,
    *,
    clear: Clearer,
    count: int = 1,
    force: bool = False,
) -> Undone:
    """Take the last ``count`` completed exchanges of ``path`` back (see the module's doc);
    `clear`: the gate's leave for the agent an undo replays to restore files."""
    if count < 1:
        raise AgentdocError(f"undo takes back at least one turn, not {count}")
    env = os.environ if environ is None else environ
    text = read_text(path)
    try:
        doc = parse(text)
    except (DocumentError, FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc
    last = check_undo(path, text, doc, count, again=undo_wrote(path, text))
    first = last - count + 1
    known = read_marks(path)
    cwd = working_dir(path, doc, allow_outside=settings.allow_cwd_outside)
    turns = range(first, last + 1)
    leave = partial(clear, cwd, doc)
    restore = files_to_restore(path, doc, turns, known, cwd, settings, env, leave, force=force)
    before = _before(known.get(first - 1), cwd, env)
    new_text = set_meta(undone_text(doc, count), forget(first, before))
    if read_text(path) != text:  # a save since: nothing restored yet, nothing lost
        raise AgentdocError(f"{path} changed while the turn was being undone; run undo again")
    files = restore() if restore is not None else 0
    # Noted before the write: the daemon may look at the document the instant it lands.
    _replace(path, text, new_text)
    _keep_removed(path, taken_out(doc, count))
    undo_marks(path, first)  # their cost was spent: kept, marked undone
    forget_snapshots(path, turns, env)
    _reset_snapshot(path, new_text)
    for turn in turns:
        drop_thinking(path, turn)
    committed = commit_undo(path, doc, settings, first)
    log.info("%s: took turns %d-%d back", path, first, last)
    return Undone(first, restore is not None, committed, count, files)


def undo_wrote(path: Path, text: str) -> bool:
    """Whether ``text`` is what `undo` last wrote into ``path`` (so a second undo goes one more
    turn back, and the daemon holds its pending prompt for the person's save)."""
    return own_write(path, digest(text.encode("utf-8"))) == "undo"


def undone_path(document: Path) -> Path:
    return state_file(document, ".undone.md")


def _keep_removed(path: Path, removed: str) -> None:
    """The later prompts (and replies) an undo of several turns took out: kept, not lost."""
    if not removed:
        return
    where = undone_path(path)
    try:
        where.parent.mkdir(exist_ok=True)
        old = where.read_bytes() if where.exists() else b""
        atomic_write(where, old + removed.rstrip().encode("utf-8") + b"\n\n")
    except OSError as exc:
        log.warning("%s: cannot keep the undone exchanges in %s: %s", path, where, exc)


def _replace(path: Path, old: str, new: str) -> None:
    """Write ``new`` over ``old``, never over a version the person saved meanwhile."""
    changed = AgentdocError(f"{path} changed while the turn was being undone; run undo again")
    if read_text(path) != old:
        raise changed
    note_own_write(path, new.encode("utf-8"), "undo", old.encode("utf-8"))
    displaced = write_text(path, new, expected=old.encode("utf-8"))
    if displaced is not None:  # a save landed in the last instant: it wins
        write_text(path, displaced.decode("utf-8"))
        raise changed


def _reset_snapshot(path: Path, text: str) -> None:
    """The session knows the conversation up to the turn before, as the document now reads."""
    doc = parse(text)
    known = joined(archived_transcript(path, doc), doc.transcript())
    snapshot = Snapshot(doc.meta.session, doc.turn_count(), known)
    write_snapshot(path, snapshot)
