"""``agentdoc undo``: take the last completed turn back — reply, file changes, the session's memory.

In this order, so a refusal or a failure leaves everything as it was:

1. Check: no turn streams, there is a completed exchange, no prompt waits below it.
2. Files: the turn's mark (`marks`) tells the agent which turn to rewind; before anything is
   restored, every tool call of the turn must be one whose changes can be restored exactly (a
   shell command that may have written something refuses the undo, naming it). A turn without
   a mark can be undone only if its reply shows no tool call.
3. The document: the reply and the empty ``## User`` below it leave, so the prompt is pending
   again (the daemon sees turns disappear and does not send it until the person saves it). The
   session forgets the turn: ``agentdoc.resume_at`` names the end of the turn before, where the
   next prompt forks the session; with no such mark the next prompt starts a new session seeded
   with the transcript (or, after undoing a first turn, a plain new one).
4. With git per turn on, a commit that says so.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents import TurnMark, branch_point, restore_files, unrestorable
from agentdoc.config import Settings
from agentdoc.document import (
    STREAMING_MARK,
    Document,
    DocumentError,
    FrontmatterError,
    archive_path,
    dominant_newline,
    drop_thinking,
    is_unanswered,
    parse,
    read_text,
    set_meta,
    write_text,
)
from agentdoc.errors import AgentdocError
from agentdoc.turn import gitcommit, history, marks
from agentdoc.turn.session import working_dir
from agentdoc.turn.status import live_turn, note_own_write

log = logging.getLogger(__name__)

# A tool call as `render.render_tool` shows it in a reply.
_TOOL_BLOCK = re.compile(r"^<details>", re.M)


@dataclass(frozen=True)
class Undone:
    turn: int
    restored: bool  # files were put back
    committed: bool


def check_undo(path: Path, text: str, doc: Document) -> int:
    """The exchange to take back, or AgentdocError saying why there is none."""
    if STREAMING_MARK in text or live_turn(path) is not None:
        raise AgentdocError(
            f"{path}: a reply is streaming into it; cancel it (`agentdoc cancel {path}`) or wait "
            "for it to finish, then undo"
        )
    count = doc.turn_count()
    if count == 0:
        raise AgentdocError(f"{path}: nothing to undo; it has no completed exchange")
    if count == (doc.meta.archived or 0):
        raise AgentdocError(
            f"{path}: nothing to undo in the document; turn {count} is in its archive "
            f"({archive_path(path).name})"
        )
    if doc.pending_prompt() is not None:
        raise AgentdocError(
            f"{path}: a prompt waits below the last reply; send it or remove it before undoing "
            f"turn {count}"
        )
    return count


def undone_text(doc: Document) -> str:
    """``doc`` without its last reply, so that reply's prompt is pending again (pure)."""
    index = max(i for i, t in enumerate(doc.turns) if t.role == "assistant")
    reply = doc.turns[index]
    nl = dominant_newline(doc.text)
    head = doc.text[: reply.start].rstrip()
    # After the reply comes only the empty next `## User`: at most HTML comments (scratchpad),
    # which stay.
    notes = "".join(t.content for t in doc.turns[index + 1 :]).strip()
    return f"{head}{nl}{nl}{notes}{nl}" if notes else f"{head}{nl}"


def forget(turn: int, before: tuple[str, str] | None) -> dict[str, Any]:
    """The ``agentdoc:`` updates that make the next prompt continue from turn ``turn - 1``:
    from the end of that turn in its session (``before``), else in a new session."""
    if turn > 1 and before is not None:
        session, end = before
        return {"session": session, "resume_at": end}
    return {"session": None, "resume_at": None}


def _before(mark: TurnMark | None, cwd: Path, environ: Mapping[str, str]) -> tuple[str, str] | None:
    return None if mark is None else branch_point(environ, mark, cwd)


def _files(
    path: Path, doc: Document, mark: TurnMark | None, cwd: Path, environ: Mapping[str, str]
) -> bool:
    """Whether the turn's files need restoring; AgentdocError if they cannot be exactly."""
    reply = [t for t in doc.turns if t.role == "assistant" and not is_unanswered(t)][-1]
    turn = doc.turn_count()
    found = None if mark is None else unrestorable(environ, mark, cwd)
    if found is None:
        if _TOOL_BLOCK.search(reply.content):
            raise AgentdocError(
                f"{path}: cannot undo turn {turn}: its tools ran, and agentdoc has no record of "
                "where the turn sits in the agent's session to restore their changes from"
            )
        return False
    changed, reasons = found
    if reasons:
        raise AgentdocError(
            f"{path}: cannot undo turn {turn} exactly: " + "; ".join(reasons) + ". Nothing was "
            "changed; take the reply out by hand and repair the files if you want to go back"
        )
    return changed


def undo(path: Path, settings: Settings, environ: Mapping[str, str] | None = None) -> Undone:
    """Take the last completed exchange of ``path`` back (see the module's doc)."""
    env = os.environ if environ is None else environ
    text = read_text(path)
    try:
        doc = parse(text)
    except (DocumentError, FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc
    turn = check_undo(path, text, doc)
    known = marks.read_marks(path)
    mark = known.get(turn)
    cwd = working_dir(path, doc, allow_outside=settings.allow_cwd_outside)
    restore = _files(path, doc, mark, cwd, env)
    if restore and mark is not None:
        restore_files(settings, env, mark, cwd)
    before = _before(known.get(turn - 1), cwd, env)
    new_text = set_meta(undone_text(doc), forget(turn, before))
    _replace(path, text, new_text)
    marks.set_mark(path, turn, None)
    _reset_snapshot(path, new_text)
    drop_thinking(path, turn)
    committed = gitcommit.enabled(doc, settings) and gitcommit.commit(
        path, gitcommit.undo_message(path, turn)
    )
    log.info("%s: took turn %d back", path, turn)
    return Undone(turn, restore, committed)


def _replace(path: Path, old: str, new: str) -> None:
    """Write ``new`` over ``old``, never over a version the person saved meanwhile."""
    changed = AgentdocError(f"{path} changed while the turn was being undone; run undo again")
    if read_text(path) != old:
        raise changed
    note_own_write(path, new.encode("utf-8"), "undo")
    displaced = write_text(path, new, expected=old.encode("utf-8"))
    if displaced is not None:  # a save landed in the last instant: it wins
        write_text(path, displaced.decode("utf-8"))
        raise changed


def _reset_snapshot(path: Path, text: str) -> None:
    """The session knows the conversation up to the turn before, as the document now reads."""
    doc = parse(text)
    known = history.joined(history.archived_transcript(path, doc), doc.transcript())
    snapshot = history.Snapshot(doc.meta.session, doc.turn_count(), known)
    history.write_snapshot(path, snapshot)
