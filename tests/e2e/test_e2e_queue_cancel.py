"""`agentdoc cancel` ends the streaming reply, not the prompt saved below it: that prompt was
queued for when the reply ends, and a cancel is an end (the real CLI, through `agentdoc watch`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document import parser as document
from agentdoc.records.status import read_status
from tests.support.claude_watch import TITLED_DOC, paused, served
from tests.support.processes import roles, run_cli, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def queued(doc: Path) -> bool:
    found = read_status(doc)
    return found is not None and found.queued


def test_a_prompt_queued_behind_a_cancelled_reply_is_sent(
    tmp_path: Path, chat_folder: Path, warm_sessions: int
) -> None:
    doc = chat_folder / "chat.md"
    second = [{"type": "text", "text": "The second answer."}]
    with served(tmp_path, chat_folder, [paused(20), second], warm_sessions=warm_sessions) as (
        api,
        env,
        _daemon,
    ):
        doc.write_text(TITLED_DOC + "First question?\n")
        api.wait_paused()
        wait_for(lambda: "word19" in doc.read_text(), what="the partial reply in the file")
        doc.write_text(doc.read_text() + "\n## User\n\nSecond question?\n")
        wait_for(lambda: queued(doc), what="the second prompt queued")
        cancelled = run_cli(["cancel", str(doc)], env)
        assert cancelled.returncode == 0, cancelled.stderr
        api.release()
        requests = api.wait_for_requests(2)
        wait_for(lambda: len(roles(doc)) == 5 and state_of(doc) == "idle", what="the answer")

    parsed = document.parse(doc.read_text())
    assert "interrupted" in parsed.turns[1].content
    assert parsed.turns[2].content.strip() == "Second question?"
    assert "The second answer." in parsed.turns[3].content
    assert requests[1].user_texts()[-1].endswith("Second question?")
