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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agentdoc.agents import LEGACY_AGENT, TurnMark
from agentdoc.document import atomic_write
from agentdoc.records.status import make_state_dir, state_file

log = logging.getLogger(__name__)

# The key of the turns `undo` took back: gone from the document and from the session's memory,
# but their money was spent. Kept (``[{"turn": N, …entry}]``) so `spent` tells the whole cost.
UNDONE = "undone"


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    # None: a turn with a cost but no place in a session agentdoc could find (no mark).
    session: str | None = None
    start: str | None = None
    agent: str = LEGACY_AGENT
    cost_total: float | None = None
    cost: float | None = None  # the turn's own cost, when the agent reported one
    kept_in: str | None = None  # the session that keeps this interrupted reply's text


class _Undone(_Entry):
    turn: int


@dataclass(frozen=True)
class Spent:
    """What a document's turns cost, as far as their agents reported."""

    total: float  # every recorded turn, undone ones included
    turns: int  # the turns with a cost
    undone: float  # of the total, what the turns taken back cost
    undone_turns: int

    def describe(self) -> str:
        """One line for `agentdoc status`."""
        turns = f"{self.turns} turn{'s' if self.turns != 1 else ''}"
        line = f"spent: ${self.total:.3f} in {turns}"
        if self.undone_turns:
            line += f" (${self.undone:.3f} of it in {self.undone_turns} undone)"
        return line


def marks_path(document: Path) -> Path:
    return state_file(document, ".turns.json")


def parse_marks(text: str) -> dict[int, TurnMark]:
    """The marks in ``text``; damaged entries (or a damaged file) are left out."""
    return _marks(_entries(_load(text)))


def _marks(entries: Mapping[int, _Entry]) -> dict[int, TurnMark]:
    return {turn: mark for turn, entry in entries.items() if (mark := _mark(entry))}


def _load(text: str) -> dict[str, Any]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return raw if isinstance(raw, dict) else {}


def _entries(raw: Mapping[str, Any]) -> dict[int, _Entry]:
    found: dict[int, _Entry] = {}
    for key, value in raw.items():
        try:
            found[int(key)] = _Entry.model_validate(value)
        except (ValidationError, ValueError):
            continue  # damaged, or the list of undone turns
    return found


def _undone(raw: Mapping[str, Any]) -> list[_Undone]:
    listed = raw.get(UNDONE)
    found: list[_Undone] = []
    for value in listed if isinstance(listed, list) else []:
        try:
            found.append(_Undone.model_validate(value))
        except ValidationError:
            continue
    return found


def _mark(entry: _Entry) -> TurnMark | None:
    if entry.session is None or entry.start is None:
        return None
    return TurnMark(entry.session, entry.start, entry.agent, entry.cost_total)


def format_marks(marks: Mapping[int, TurnMark]) -> str:
    return _format({turn: _entry(m) for turn, m in marks.items()}, [])


def _format(entries: Mapping[int, _Entry], undone: Iterable[_Undone]) -> str:
    raw: dict[str, Any] = {
        str(turn): e.model_dump(exclude_none=True) for turn, e in sorted(entries.items())
    }
    kept = [u.model_dump(exclude_none=True) for u in undone]
    if kept:
        raw[UNDONE] = kept
    return json.dumps(raw, indent=1) + "\n"


def _entry(mark: TurnMark | None, cost: float | None = None, kept_in: str | None = None) -> _Entry:
    if mark is None:
        return _Entry(cost=cost, kept_in=kept_in)
    return _Entry(
        session=mark.session,
        start=mark.start,
        agent=mark.agent,
        cost_total=mark.cost_total,
        cost=cost,
        kept_in=kept_in,
    )


def session_total(marks: Mapping[int, TurnMark], session: str) -> float | None:
    """The highest running cost the agent reported for ``session``, if it reported any.

    The highest, not the last turn's: resumed at an earlier point (a fork at turn N, after
    `undo`), an agent may still count the whole session's cost in its total. Undone turns are
    left out: forked at the turn before them, a newer release counts the session only up to
    that point. An agent that keeps a copy of the session at a turn's end (its mark's
    ``start``) starts that copy's count from the turn's total.
    """
    totals = [m.cost_total for m in marks.values() if session in (m.session, m.start)]
    return max((t for t in totals if t), default=None)


def _read(document: Path) -> dict[str, Any]:
    try:
        return _load(marks_path(document).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return {}


def read_marks(document: Path) -> dict[int, TurnMark]:
    return _marks(_entries(_read(document)))


def read_undone(document: Path) -> list[TurnMark]:
    """The marks of the turns `undo` took back (their session, running cost)."""
    return [mark for entry in _undone(_read(document)) if (mark := _mark(entry))]


def kept_in(document: Path, turn: int) -> str | None:
    """The session that keeps the text of interrupted ``turn``, if its agent keeps it."""
    entry = _entries(_read(document)).get(turn)
    return entry.kept_in if entry is not None else None


def spent(document: Path) -> Spent:
    """The cost of the document's turns the agents reported, undone turns included."""
    raw = _read(document)
    kept = [e.cost for e in _entries(raw).values() if e.cost]
    undone = [u.cost for u in _undone(raw) if u.cost]
    # Rounded as the agents' own figures are: a sum of floats is not exact.
    total, taken = round(sum(kept) + sum(undone), 9), round(sum(undone), 9)
    return Spent(total, len(kept) + len(undone), taken, len(undone))


def _write(document: Path, entries: Mapping[int, _Entry], undone: Iterable[_Undone]) -> None:
    path = marks_path(document)
    try:
        make_state_dir(path.parent)
        atomic_write(path, _format(entries, undone).encode("utf-8"))
    except OSError as exc:
        log.warning("cannot write the turn marks %s: %s", path, exc)


def write_marks(document: Path, marks: Mapping[int, TurnMark]) -> None:
    _write(document, {turn: _entry(m) for turn, m in marks.items()}, _undone(_read(document)))


def set_mark(
    document: Path,
    turn: int,
    mark: TurnMark | None,
    cost: float | None = None,
    kept_in: str | None = None,
) -> None:
    """Record ``mark`` for ``turn`` (None: forget it) with the turn's own ``cost`` (kept even
    without a mark) and the session that keeps its interrupted text (``kept_in``); later turns
    are gone with it. The undone turns stay."""
    raw = _read(document)
    entries = {t: e for t, e in _entries(raw).items() if t < turn}
    if mark is not None or cost or kept_in:
        entries[turn] = _entry(mark, cost, kept_in)
    _write(document, entries, _undone(raw))


def undo_marks(document: Path, first: int) -> None:
    """Take the marks of turns ``first`` on back: they leave the session's turns, and are kept
    as undone for their cost."""
    raw = _read(document)
    entries = _entries(raw)
    taken = [_Undone(turn=t, **e.model_dump()) for t, e in sorted(entries.items()) if t >= first]
    kept = {t: e for t, e in entries.items() if t < first}
    _write(document, kept, [*_undone(raw), *taken])
