"""The real Claude Code CLI through the offline API: forks, lost sessions, interrupted turns."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.agents.fakeapi.wire import RecordedRequest
from agentdoc.config import Settings
from agentdoc.conversation.forking import fork
from agentdoc.document import parser as document
from agentdoc.turn.outcome import TurnOutcome
from agentdoc.turn.runner import TurnRunner
from agentdoc.turn.session import LOST_NOTE
from tests.support.claude_cli import claude_env
from tests.support.clearance import own_leave
from tests.support.documents import titled

pytestmark = pytest.mark.e2e

DOC = titled("Sessions", "What is a borrow?\n")

FIRST_TEXT = "A borrow is a temporary reference to a value."
FIRST = [{"type": "text", "text": FIRST_TEXT}]


def reply(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def add_prompt(path: Path, prompt: str) -> None:
    path.write_text(path.read_text() + prompt + "\n")


def assistant_texts(request: RecordedRequest) -> list[str]:
    return [
        block.get("text", "")
        for message in request.messages()
        if message["role"] == "assistant"
        for block in (message["content"] if isinstance(message["content"], list) else [])
    ]


def session_files(home: Path, session: str) -> list[Path]:
    return sorted(home.glob(f".claude/projects/*/{session}.jsonl"))


def run(path: Path, settings: Settings, env: dict[str, str], **kwargs: Any) -> TurnOutcome:
    return TurnRunner(path, settings, clear=own_leave, environ=env, **kwargs).run()


def test_fork_at_the_last_turn_continues_a_copy_of_the_parent_session(
    tmp_path: Path, settings: Settings
) -> None:
    parent, new, home = tmp_path / "chat.md", tmp_path / "branch.md", tmp_path / "home"
    parent.write_text(DOC)
    script = [FIRST, reply("Forked answer."), reply("Parent answer.")]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, home)
        first = run(parent, settings, env, mode="start")
        assert first.state == "done" and first.session_id
        parent_bytes = parent.read_bytes()

        fork(parent, new)
        assert parent.read_bytes() == parent_bytes
        add_prompt(new, "Fork question?")
        forked = run(new, settings, env)
        assert forked.state == "done"
        assert forked.session_id not in (None, first.session_id)
        assert document.parse(new.read_text()).meta.session == forked.session_id
        assert "Forked answer." in new.read_text()
        assert parent.read_bytes() == parent_bytes
        assert session_files(home, forked.session_id or "")  # the CLI made the fork's file

        add_prompt(parent, "Parent question?")
        again = run(parent, settings, env)
        assert again.session_id == first.session_id
        requests = api.wait_for_requests(3)

    fork_request, parent_request = requests[1], requests[2]
    assert fork_request.user_texts()[0] == "What is a borrow?"
    assert fork_request.user_texts()[-1] == "Fork question?"
    assert FIRST_TEXT in assistant_texts(fork_request)
    # The parent session never saw the fork's turn.
    assert parent_request.user_texts()[-1] == "Parent question?"
    assert all("Fork question?" not in t for t in parent_request.user_texts())
    assert "Forked answer." not in assistant_texts(parent_request)


def test_fork_at_an_earlier_turn_starts_a_session_seeded_with_that_history(
    tmp_path: Path, settings: Settings
) -> None:
    parent, new = tmp_path / "chat.md", tmp_path / "early.md"
    parent.write_text(DOC)
    script = [FIRST, reply("The second answer."), reply("A new direction.")]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        first = run(parent, settings, env, mode="start")
        add_prompt(parent, "And a mutable borrow?")
        run(parent, settings, env)
        parent_bytes = parent.read_bytes()

        fork(parent, new, turn=1)
        add_prompt(new, "What about moves instead?")
        forked = run(new, settings, env)
        requests = api.wait_for_requests(3)

    assert forked.state == "done" and forked.session_id != first.session_id
    assert parent.read_bytes() == parent_bytes
    seeded = requests[2]
    assert assistant_texts(seeded) == []  # a brand-new session: no history of its own
    prompt = seeded.user_texts()[-1]
    assert "What is a borrow?" in prompt and FIRST_TEXT in prompt
    assert "And a mutable borrow?" not in prompt and "The second answer." not in prompt
    assert prompt.endswith("What about moves instead?")


def test_resume_after_a_cancelled_turn_sends_the_interrupted_text(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(DOC)
    words = " ".join(f"word{i}" for i in range(40))
    script: list[ScriptEntry] = [
        {"content": reply(words), "pause_after_deltas": 8},
        reply("Continuing."),
    ]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        cancel = threading.Event()
        runner = TurnRunner(
            path, settings, clear=own_leave, mode="start", environ=env, cancel=cancel
        )
        outcomes: list[TurnOutcome] = []
        worker = threading.Thread(target=lambda: outcomes.append(runner.run()))
        worker.start()
        api.wait_paused()
        deadline = time.monotonic() + 20
        while "word7" not in path.read_text():
            assert time.monotonic() < deadline, "the partial reply never reached the file"
            time.sleep(0.02)
        cancel.set()
        worker.join(60)
        api.release()
        (cut,) = outcomes
        assert cut.state == "cancelled"
        text = path.read_text()
        assert "word7" in text and "word8" not in text and "interrupted" in text

        add_prompt(path, "Please go on.")
        resumed = run(path, settings, env, mode="resume")
        assert resumed.state == "done" and resumed.session_id == cut.session_id
        requests = api.wait_for_requests(2)

    prompt = requests[-1].user_texts()[-1]
    assert prompt.endswith("Please go on.")
    assert "What is a borrow?" in [t.strip() for t in requests[-1].user_texts()]
    # The model sees the interrupted text exactly once: from the CLI's own history of that turn
    # if the CLI kept it (2.1.330), else in the prompt (2.1.197 drops it).
    kept = [t for t in assistant_texts(requests[-1]) if "word7" in t]
    sent = [t for t in requests[-1].user_texts() if "word7" in t]
    assert len(kept + sent) == 1, (kept, sent)
    if not kept:
        assert "<partial-answer>" in prompt and "word0 word1" in prompt and "word7" in prompt
    else:
        assert "<partial-answer>" not in prompt and "word0 word1" in kept[0]


def after_losing(
    tmp_path: Path,
    settings: Settings,
    lose: Callable[[Path, str], None],
    prompt: str,
    answer: str,
) -> tuple[TurnOutcome, TurnOutcome, list[RecordedRequest]]:
    """A first turn, then `lose(home, its session)` before the second prompt is run: both
    outcomes and the API's two requests."""
    path, home = tmp_path / "chat.md", tmp_path / "home"
    path.write_text(DOC)
    with FakeMessagesAPI([FIRST, reply(answer)]) as api:
        env = claude_env(api, home)
        first = run(path, settings, env, mode="start")
        lose(home, first.session_id or "")
        add_prompt(path, prompt)
        second = run(path, settings, env)
        requests = api.wait_for_requests(2)
    return first, second, requests


def _delete(home: Path, session: str) -> None:
    for lost in session_files(home, session):
        lost.unlink()


def test_lost_session_is_rebuilt_from_the_document(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "chat.md"
    first, rebuilt, requests = after_losing(
        tmp_path, settings, _delete, "Is it still there?", "Rebuilt answer."
    )

    assert rebuilt.state == "done" and rebuilt.session_id != first.session_id
    doc = document.parse(path.read_text())
    assert doc.meta.session == rebuilt.session_id
    assert LOST_NOTE in doc.turns[3].content and "Rebuilt answer." in doc.turns[3].content
    assert len(requests) == 2
    assert assistant_texts(requests[1]) == []
    prompt = requests[1].user_texts()[-1]
    assert "What is a borrow?" in prompt and FIRST_TEXT in prompt
    assert prompt.endswith("Is it still there?")


def test_no_conversation_found_is_retried_as_a_rebuild(tmp_path: Path, settings: Settings) -> None:
    path = tmp_path / "chat.md"

    def damage(home: Path, session: str) -> None:
        # A damaged session file: it names the folder, so it passes our check, but the CLI
        # finds no conversation in it.
        (damaged,) = session_files(home, session)
        record = {"type": "mode", "cwd": os.path.realpath(tmp_path), "sessionId": session}
        damaged.write_text(json.dumps(record) + "\n")

    first, retried, requests = after_losing(
        tmp_path, settings, damage, "Still there?", "After the retry."
    )

    assert retried.state == "done" and retried.session_id != first.session_id
    text = path.read_text()
    assert "No conversation found" not in text and "[!WARNING]" not in text
    assert LOST_NOTE in text and "After the retry." in text
    assert document.parse(text).meta.session == retried.session_id
    assert len(requests) == 2  # the failed resume never reached the API
    assert FIRST_TEXT in requests[1].user_texts()[-1]


def test_edits_to_earlier_turns_reach_the_resumed_session_as_a_diff(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(DOC)
    with FakeMessagesAPI([FIRST, reply("Noted.")]) as api:
        env = claude_env(api, tmp_path / "home")
        run(path, settings, env, mode="start")
        path.write_text(path.read_text().replace("What is a borrow?", "What is a Rust borrow?"))
        add_prompt(path, "Did you see my edit?")
        run(path, settings, env, mode="resume")
        requests = api.wait_for_requests(2)

    prompt = requests[1].user_texts()[-1]
    assert "-User: What is a borrow?\n+User: What is a Rust borrow?" in prompt
    assert prompt.endswith("Did you see my edit?")
