"""The real Claude Code CLI through the offline Messages API: start, resume, stream, edit."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.document import parser as document
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env
from tests.support.clearance import own_leave
from tests.support.documents import titled

pytestmark = pytest.mark.e2e

DOC = titled("E2E", "What is a borrow?\n")

FIRST = [
    {"type": "thinking", "thinking": "Explain borrowing briefly.", "signature": "s1"},
    {"type": "text", "text": "A borrow is a temporary reference to a value."},
]
SECOND = [{"type": "text", "text": "Yes: a mutable borrow is exclusive."}]


def test_start_then_resume_keeps_the_session_and_its_history(
    tmp_path: Path, settings: Settings
) -> None:
    doc = tmp_path / "borrow.md"
    doc.write_text(DOC)
    with FakeMessagesAPI([FIRST, SECOND]) as api:
        env = claude_env(api, tmp_path / "home")
        first = TurnRunner(doc, settings, clear=own_leave, mode="start", environ=env).run()
        assert first.state == "done"
        parsed = document.parse(doc.read_text())
        assert parsed.meta.session == first.session_id
        assert "A borrow is a temporary reference to a value." in parsed.turns[1].content
        sidecar = (tmp_path / "borrow.thinking.md").read_text()
        assert "Explain borrowing briefly." in sidecar
        assert "Explain borrowing briefly." not in doc.read_text()

        with doc.open("a") as f:
            f.write("Is a mutable borrow exclusive?\n")
        second = TurnRunner(doc, settings, clear=own_leave, mode="resume", environ=env).run()
        assert second.state == "done"
        assert second.session_id == first.session_id

        final = document.parse(doc.read_text())
        assert [t.role for t in final.turns] == ["user", "assistant"] * 2 + ["user"]
        assert "Yes: a mutable borrow is exclusive." in final.turns[3].content
        requests = api.wait_for_requests(2)

    history = requests[1].user_texts()
    assert history[0] == "What is a borrow?"
    assert history[-1] == "Is a mutable borrow exclusive?"
    assistant_texts = [
        block.get("text", "")
        for m in requests[1].messages()
        if m["role"] == "assistant"
        for block in (m["content"] if isinstance(m["content"], list) else [])
    ]
    assert "A borrow is a temporary reference to a value." in assistant_texts
    # Thinking never goes back: the CLI may echo its own signed thinking block, but nothing
    # agentdoc sends (the prompts) contains it.
    assert all("Explain borrowing" not in t for t in history)


def test_reply_streams_into_the_file_while_the_user_types(
    tmp_path: Path, settings: Settings
) -> None:
    doc = tmp_path / "live.md"
    doc.write_text(DOC)
    words = " ".join(f"word{i}" for i in range(60))
    script = [{"content": [{"type": "text", "text": words}], "pause_after_deltas": 20}]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        runner = TurnRunner(doc, settings, clear=own_leave, mode="start", environ=env)
        done = threading.Event()

        def turn() -> None:
            runner.run()
            done.set()

        worker = threading.Thread(target=turn)
        worker.start()
        api.wait_paused()
        deadline = time.monotonic() + 10
        while "word19" not in doc.read_text():
            assert time.monotonic() < deadline, "partial reply never reached the file"
            time.sleep(0.02)
        partial = doc.read_text()
        assert "word30" not in partial
        doc.write_text(partial.replace("# E2E\n", "# E2E\n\nMy note, typed mid-reply.\n"))
        api.release()
        worker.join(60)
    assert done.is_set()
    text = doc.read_text()
    assert "My note, typed mid-reply." in text
    assert text.count(words) == 1
