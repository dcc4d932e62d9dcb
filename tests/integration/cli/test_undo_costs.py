"""An undone turn's cost stays counted: its money was spent, whatever the document now shows."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from agentdoc.agents import TurnMark
from agentdoc.cli import cli
from agentdoc.records import marks

S1, S2 = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


def three_turns(doc: Path) -> None:
    marks.set_mark(doc, 1, TurnMark(S1, "p1", cost_total=0.01), 0.01)
    marks.set_mark(doc, 2, TurnMark(S1, "p2", cost_total=0.03), 0.02)
    marks.set_mark(doc, 3, TurnMark(S1, "p3", cost_total=0.06), 0.03)


def test_undo_keeps_the_undone_turns_costs_apart_from_the_sessions_turns(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    three_turns(doc)
    marks.undo_marks(doc, 2)
    assert marks.read_marks(doc) == {1: TurnMark(S1, "p1", cost_total=0.01)}
    assert marks.read_undone(doc) == [
        TurnMark(S1, "p2", cost_total=0.03),
        TurnMark(S1, "p3", cost_total=0.06),
    ]
    spent = marks.spent(doc)
    assert (spent.total, spent.turns, spent.undone, spent.undone_turns) == (
        0.06,
        3,
        0.05,
        2,
    )


def test_turns_after_an_undo_and_a_second_undo_add_up(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    three_turns(doc)
    marks.undo_marks(doc, 3)
    marks.set_mark(doc, 3, TurnMark(S2, "q3", cost_total=0.005), 0.005)  # the redo
    assert marks.read_marks(doc)[3] == TurnMark(S2, "q3", cost_total=0.005)
    marks.undo_marks(doc, 2)
    assert marks.read_marks(doc) == {1: TurnMark(S1, "p1", cost_total=0.01)}
    assert [m.start for m in marks.read_undone(doc)] == ["p3", "p2", "q3"]
    assert marks.spent(doc).total == 0.065
    assert marks.spent(doc).undone_turns == 3


def test_a_turn_without_a_mark_keeps_its_cost(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    marks.set_mark(doc, 1, None, 0.02)  # an agent that cannot branch at a turn
    assert marks.read_marks(doc) == {}
    marks.undo_marks(doc, 1)
    assert marks.spent(doc).undone == 0.02


def test_a_file_from_before_and_a_damaged_list_still_read(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    old = {"1": {"session": S1, "start": "p1", "agent": "claude", "cost_total": 0.01}}
    marks.marks_path(doc).parent.mkdir()
    marks.marks_path(doc).write_text(json.dumps({**old, "undone": {"not": "a list"}}))
    assert marks.read_marks(doc) == {1: TurnMark(S1, "p1", cost_total=0.01)}
    assert marks.read_undone(doc) == []
    assert marks.spent(doc).turns == 0


def test_status_tells_what_the_turns_cost_undone_ones_included(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text("---\nagentdoc:\n  session: x\n---\n\n## User\n\nhi\n")
    three_turns(doc)
    marks.undo_marks(doc, 3)
    result = CliRunner().invoke(cli, ["status", str(doc)], catch_exceptions=False)
    assert "  spent: $0.060 in 3 turns ($0.030 of it in 1 undone)" in result.output
    result = CliRunner().invoke(cli, ["status", "--json", str(doc)], catch_exceptions=False)
    spent = json.loads(result.output)["spent"]
    assert spent == {"total": 0.06, "turns": 3, "undone": 0.03, "undone_turns": 1}
