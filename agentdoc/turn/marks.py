"""Per-turn marks: where each completed turn sits in the agent's own session.

Kept in ``.agentdoc/<name>.turns.json`` beside the other state files, one entry per completed
exchange of the document: ``{"1": {"session": …, "start": …, "agent": …, "cost_total": …}, …}``,
``start`` being the agent's id of the turn's prompt and ``cost_total`` the session's running cost
the agent reported then (the next turn's own cost is the difference, for an agent that reports
running totals). A fork at turn N continues the session up to the end of
turn N; `undo` takes turn N's file changes back to its start and lets the next prompt continue
from the end of turn N-1. A lost or damaged file only costs those: forks then get seeded
sessions and `undo` refuses.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from agentdoc.agents import LEGACY_AGENT, TurnMark
from agentdoc.document import atomic_write
from agentdoc.turn.status import make_state_dir, state_file

log = logging.getLogger(__name__)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    session: str
    start: str
    agent: str = LEGACY_AGENT
    cost_total: float | None = None


def marks_path(document: Path) -> Path:
    return state_file(document, ".turns.json")


def parse_marks(text: str) -> dict[int, TurnMark]:
    """The marks in ``text``; damaged entries (or a damaged file) are left out."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return {}
    found: dict[int, TurnMark] = {}
    for key, value in raw.items() if isinstance(raw, dict) else []:
        try:
            entry = _Entry.model_validate(value)
            found[int(key)] = TurnMark(entry.session, entry.start, entry.agent, entry.cost_total)
        except (ValidationError, ValueError):
            continue
    return found


def format_marks(marks: Mapping[int, TurnMark]) -> str:
    raw = {str(turn): _entry(m) for turn, m in sorted(marks.items())}
    return json.dumps(raw, indent=1) + "\n"


def _entry(mark: TurnMark) -> dict[str, object]:
    entry: dict[str, object] = {"session": mark.session, "start": mark.start, "agent": mark.agent}
    if mark.cost_total is not None:
        entry["cost_total"] = mark.cost_total
    return entry


def session_total(marks: Mapping[int, TurnMark], session: str) -> float | None:
    """The highest running cost the agent reported for ``session``, if it reported any.

    The highest, not the last turn's: resumed at an earlier point (a fork at turn N, after
    `undo`), Claude Code 2.1.330 still counts the whole session file's cost in its total.
    """
    totals = [m.cost_total for m in marks.values() if m.session == session and m.cost_total]
    return max(totals, default=None)


def read_marks(document: Path) -> dict[int, TurnMark]:
    try:
        return parse_marks(marks_path(document).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return {}


def write_marks(document: Path, marks: Mapping[int, TurnMark]) -> None:
    path = marks_path(document)
    try:
        make_state_dir(path.parent)
        atomic_write(path, format_marks(marks).encode("utf-8"))
    except OSError as exc:
        log.warning("cannot write the turn marks %s: %s", path, exc)


def set_mark(document: Path, turn: int, mark: TurnMark | None) -> None:
    """Record ``mark`` for ``turn`` (None: forget it); later turns are gone with it."""
    marks = {t: m for t, m in read_marks(document).items() if t < turn}
    if mark is not None:
        marks[turn] = mark
    write_marks(document, marks)
