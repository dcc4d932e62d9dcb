"""What the daemon hands to the search index: each state of a conversation a person can find,
not the half-way states of a turn (indexing a long document costs tens of milliseconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.daemon import acting, service, turns
from agentdoc.daemon.service import Daemon
from tests.support.daemon import DOC, Running, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


def test_a_saved_prompt_is_indexed_with_its_reply_not_before_it(
    monkeypatch: pytest.MonkeyPatch, folder: Path, plain_claude: FakeClaude
) -> None:
    doc = folder / "chat.md"
    noted: list[str] = []
    for part in (service, acting, turns):  # the loop indexes saves; a turn's end, the reply
        monkeypatch.setattr(part, "note_changed", lambda path: noted.append(path.read_text()))
    settings = plain_claude.settings(settle_step=0.1, settle_max=1.0)
    with Running(Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0.5)):
        doc.write_text(DOC)
        wait_for(lambda: len(noted) == 1, what="the new document in the index")
        doc.write_text(DOC + "hi there\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: "hi there" in noted[-1], what="the reply in the index")
    with_prompt = [text for text in noted if "hi there" in text]
    assert with_prompt == [doc.read_text()]  # once, with the reply
