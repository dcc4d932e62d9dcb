"""How a turn's end is named, from its reply (pure)."""

from __future__ import annotations

import pytest

from agentdoc.agents import Reply, TextPart, ToolPart
from agentdoc.document.render import render_body
from agentdoc.turn.outcome import final_state, unanswered

TOOL = ToolPart("toolu_1", "Read", {"file_path": "a.md"})
PARTS = {
    "nothing": (),
    "blank text": (TextPart(" \n", committed=False),),
    "text": (TextPart("Because", committed=False),),
    "a tool call": (TOOL,),
    "blank text and a tool": (TextPart("\n", committed=True), TOOL),
}


@pytest.mark.parametrize("parts", PARTS.values(), ids=PARTS.keys())
@pytest.mark.parametrize(
    "ending", [{"error": "API Error: 529"}, {"interrupted": True}, {"finished": True}]
)
def test_unanswered_means_the_final_render_would_show_nothing(
    parts: tuple[TextPart | ToolPart, ...], ending: dict[str, object]
) -> None:
    reply = Reply(parts=parts, **ending)  # type: ignore[arg-type]
    ended_badly = "error" in ending or "interrupted" in ending
    expected = ended_badly and not render_body(reply, final=True).strip()
    assert unanswered(reply) == expected


@pytest.mark.parametrize(
    ("reply", "cancelled", "state"),
    [
        (Reply(finished=True), True, "cancelled"),
        (Reply(error="boom"), False, "failed"),
        (Reply(interrupted=True), False, "interrupted"),
        (Reply(finished=True), False, "done"),
    ],
)
def test_final_state(reply: Reply, cancelled: bool, state: str) -> None:
    assert final_state(reply, cancelled=cancelled) == state
