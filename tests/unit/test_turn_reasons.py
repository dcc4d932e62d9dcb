"""The words a person gave answering tool requests are kept with the document's state until a
prompt has carried them (for agents whose answer has no field for them)."""

from __future__ import annotations

import json
from pathlib import Path

from agentdoc.agents import PermissionAsked
from agentdoc.agents.base.events import PermissionOption
from agentdoc.document import WriteLedger
from agentdoc.records import reasons
from agentdoc.turn.approvals import SELF_REFUSAL, Approvals


def test_kept_in_order_and_dropped_once_sent(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    assert reasons.carried(doc) == ()
    reasons.keep(doc, " Not that file. ")
    reasons.keep(doc, "Use b.txt")
    assert reasons.carried(doc) == ("Not that file.", "Use b.txt")
    assert reasons.reasons_path(doc).parent == tmp_path / ".agentdoc"
    reasons.drop(doc, 1)  # a turn carried the first; the second came during it
    assert reasons.carried(doc) == ("Use b.txt",)
    reasons.drop(doc, 1)
    assert not reasons.reasons_path(doc).exists()


def test_an_unreadable_file_carries_nothing(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    path = reasons.reasons_path(doc)
    path.parent.mkdir()
    for text in ("not json", json.dumps({"a": 1}), json.dumps([1, "", "kept"])):
        path.write_text(text)
        assert reasons.carried(doc) == (() if text != json.dumps([1, "", "kept"]) else ("kept",))


class _Turn:
    def __init__(self) -> None:
        self.answers: list[tuple[str, str, str | None]] = []

    def answer(self, request_id: str, option_id: str, message: str | None = None) -> bool:
        self.answers.append((request_id, option_id, message))
        return True


def _refused_at_once(tmp_path: Path, carries: bool) -> _Turn:
    """A tool call on the document itself: agentdoc refuses it without asking, and says why."""
    doc = tmp_path / "chat.md"
    doc.write_text("x")
    approvals = Approvals(doc, WriteLedger(), timeout=60.0, carries_reason=carries)
    options = (PermissionOption("no", "Reject", "reject_once"),)
    request = PermissionAsked("acp-1", "write", {"filePath": str(doc)}, options=options)
    turn = _Turn()
    assert approvals.ask(request, turn)  # type: ignore[arg-type]
    return turn


def test_the_words_of_a_denial_are_kept_where_the_answer_cannot_carry_them(
    tmp_path: Path,
) -> None:
    turn = _refused_at_once(tmp_path, carries=False)
    assert turn.answers == [("acp-1", "no", SELF_REFUSAL)]
    assert reasons.carried(tmp_path / "chat.md") == (SELF_REFUSAL,)


def test_nothing_is_kept_where_the_answer_carries_them(tmp_path: Path) -> None:
    turn = _refused_at_once(tmp_path, carries=True)
    assert turn.answers == [("acp-1", "no", SELF_REFUSAL)]
    assert reasons.carried(tmp_path / "chat.md") == ()
