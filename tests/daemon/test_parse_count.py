"""How often one turn parses the document, from the settled save to the reply's end: each parse
of a long conversation costs milliseconds, and the daemon's path reads a save once (a
`Snapshot`) so its steps do not each parse it again."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agentdoc.document import parser
from tests.support.daemon import DOC, Running, make_daemon, state_of
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

# Measured on the whole turn (save -> classify -> turn -> footer -> the look after its end).
MOST_PARSES = 5  # 8 before the snapshot, 6 before the reply opened in the version the turn read
MOST_PROMPT_LOOKS = 3  # the snapshot, the turn as it starts, the reply as it opens


def test_one_turn_parses_the_document_only_a_few_times(
    folder: Path, monkeypatch: pytest.MonkeyPatch, doc: Path, plain_claude: FakeClaude
) -> None:
    calls: Counter[str] = Counter()
    original = parser._parse
    looked = parser.Document.pending_prompt

    def counting(text: str, meta: Any) -> parser.Document:
        if "hi there" in text:  # this conversation, not the test's own looks
            calls["parse"] += 1
        return original(text, meta)

    def looking(doc: parser.Document) -> str | None:
        if "hi there" in doc.text and "## Assistant" not in doc.text:  # the prompt's save
            calls["prompt"] += 1
        return looked(doc)

    with Running(make_daemon(folder, plain_claude), discovered=True) as daemon:
        monkeypatch.setattr(parser, "_parse", counting)
        monkeypatch.setattr(parser.Document, "pending_prompt", looking)
        doc.write_text(DOC + "hi there\n")
        wait_for(lambda: "## Assistant" in doc.read_text(), what="the reply")
        wait_for(lambda: state_of(doc) == "idle", what="status idle")
        wait_for(lambda: not daemon._deadlines._heap, what="the look after the turn")
    print(f"parses per turn: {calls['parse']}, looks for the saved prompt: {calls['prompt']}")
    assert 0 < calls["parse"] <= MOST_PARSES
    assert 0 < calls["prompt"] <= MOST_PROMPT_LOOKS
