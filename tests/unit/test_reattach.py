"""Deleted reply or stale buffer: the pure decision."""

from __future__ import annotations

import pytest

from agentdoc.document import parser as document
from agentdoc.turn.detect import reattach

BEFORE = "---\nagentdoc: {}\n---\n\n# T\n\n## User\n\nWhat is a borrow?\n"


@pytest.mark.parametrize(
    ("saved", "restored"),
    [
        (BEFORE, False),  # exactly the text before the reply: the block was deleted
        (BEFORE + "\n\n", False),  # ... give or take trailing blank lines
        (BEFORE.replace("# T\n", "# T\n\nnote\n"), True),  # stale copy plus a note
        (BEFORE + "and lifetimes?\n", True),  # stale copy, the prompt typed on
        (BEFORE.replace("What is a borrow?", "Something else"), False),  # prompt rewritten
        (BEFORE + "\n## Assistant\n", False),  # the reply's text deleted, its heading kept
        (BEFORE + "\n## Assistant\n\n\n", False),
    ],
)
def test_deleted_or_stale(saved: str, restored: bool) -> None:
    result = reattach(saved, BEFORE, "What is a borrow?", "abcd1234")
    assert (result is not None) is restored
    if result is not None:
        parsed = document.parse(result)
        assert [t.role for t in parsed.turns] == ["user", "assistant"]
        assert "agentdoc:reply abcd1234" in parsed.turns[1].content
        assert result.startswith(saved)  # only added to: every character of the save is kept
