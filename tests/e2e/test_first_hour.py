"""The paths a new user hits in the first hour, driven as they drive them.

`agentdoc run` and `agentdoc watch` run as their own processes, with the real Claude Code CLI
talking to the offline Messages API; signals are real signals, saves are real writes.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.document import parser as document
from agentdoc.records import status
from tests.support.claude_cli import agentdoc_env
from tests.support.documents import chat_in
from tests.support.processes import (
    CLI,
    processes_with_env,
    roles,
    run_cli,
    state_of,
    status_json,
    watching,
    write_config,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

DOC = """---
agentdoc: {}
---

# Chat

## User

What is a borrow?
"""
PROMPT = "What is a borrow?"
WORDS = " ".join(f"word{i}" for i in range(60))
ANSWER = [{"type": "text", "text": "A borrow is a reference."}]


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as served:
        yield served


@pytest.fixture
def env(tmp_path: Path, api: FakeMessagesAPI) -> dict[str, str]:
    config = write_config(
        tmp_path / "config.toml", settle_step=0.1, settle_max=1.0, flush_interval=0.05
    )
    return agentdoc_env(tmp_path, api, config, CLAUDE_CODE_MAX_RETRIES="0")


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    return chat_in(tmp_path / "docs", DOC)


def sent_prompts(api: FakeMessagesAPI) -> list[str]:
    return [r.user_texts()[-1] for r in api.requests]


# --- 1. a failed turn does not use up the prompt ----------------------------------------------


def test_a_failed_run_leaves_the_prompt_pending_and_the_next_run_sends_it(
    api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    api.add({"status": 401})
    failed = run_cli(["run", str(doc)], env, timeout=60)
    assert failed.returncode == 2, failed.stderr
    assert "Invalid API key" in failed.stderr
    parsed = document.parse(doc.read_text())
    assert [t.role for t in parsed.turns] == ["user", "assistant"]
    assert parsed.pending_prompt() == PROMPT, "the failure must not use up the prompt"
    notice = parsed.turns[1].content
    assert "Invalid API key" in notice and "still pending" in notice
    assert state_of(doc) == "error"

    api.add(ANSWER)
    again = run_cli(["run", str(doc)], env, timeout=60)  # no retyping
    assert again.returncode == 0, again.stderr
    parsed = document.parse(doc.read_text())
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert "A borrow is a reference." in parsed.turns[1].content
    assert "[!WARNING]" not in doc.read_text()
    assert sent_prompts(api) == [PROMPT, PROMPT]
    assert parsed.turn_count() == 1


def test_the_daemon_sends_a_failed_prompt_again_on_the_next_save_not_by_itself(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    doc.write_text(DOC.replace(PROMPT, ""))
    api.add({"status": 529})
    with watching(doc.parent, env, tmp_path / "watch.log"):
        doc.write_text(DOC)
        wait_for(lambda: "[!WARNING]" in doc.read_text(), "the failure notice")
        assert document.parse(doc.read_text()).pending_prompt() == PROMPT
        # Not resent by itself: the daemon's own write of the notice is no save of the user's.
        with pytest.raises(TimeoutError):
            api.wait_for_requests(2, timeout=2.0)
        api.add(ANSWER)
        # The user saves with a change: here, deleting the notice, as the notice suggests.
        text = doc.read_text()
        doc.write_text(text[: text.index("## Assistant")])
        wait_for(lambda: "A borrow is a reference." in doc.read_text(), "the reply")
        wait_for(lambda: state_of(doc) == "idle", "status idle")
    assert sent_prompts(api) == [PROMPT, PROMPT]
    assert roles(doc) == ["user", "assistant", "user"]


def test_a_retry_replaces_the_notice_left_in_place(
    api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    # For every request: Claude Code 2.1.330 retries a 400 in a few variants before giving up.
    api.add({"status": 400, "message": "messages: roles must alternate", "times": "always"})
    assert run_cli(["run", str(doc)], env, timeout=60).returncode == 2
    api.clear()
    api.add(ANSWER)
    assert run_cli(["run", str(doc)], env, timeout=60).returncode == 0
    text = doc.read_text()
    assert "roles must alternate" not in text and text.count("## Assistant") == 1


# --- 2. deleting the streaming block ends the turn's status -----------------------------------


@contextlib.contextmanager
def mid_reply(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> Iterator[str]:
    """The daemon, with the reply to DOC's prompt held after its tenth word: the text then."""
    doc.write_text(DOC.replace(PROMPT, ""))
    api.add({"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10})
    with watching(doc.parent, env, tmp_path / "watch.log"):
        doc.write_text(DOC)
        api.wait_paused()
        wait_for(lambda: "word9" in doc.read_text(), "the partial reply")
        yield doc.read_text()


def test_deleting_the_streaming_block_leaves_the_status_idle(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    with mid_reply(tmp_path, api, env, doc) as text:
        doc.write_text(text[: text.index("## Assistant")])
        wait_for(lambda: state_of(doc) != "streaming", "the status to leave streaming")
        api.release()
        assert state_of(doc) == "idle"
        cancelled = run_cli(["cancel", str(doc)], env)
        assert "no turn is streaming" in cancelled.stderr
    # A one-shot CLI is stopped with the turn; a warm one is kept for the next turn and ends
    # when the daemon closes it, which takes the CLI a moment after the daemon has stopped.
    wait_for(lambda: processes_with_env("HOME", env["HOME"]) == [], "the CLI to end")


# --- 3. Ctrl-C, SIGTERM, SIGHUP on `agentdoc run` -----------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_closes_the_reply_stops_the_cli_and_exits_128_plus_n(
    api: FakeMessagesAPI, env: dict[str, str], doc: Path, sig: signal.Signals
) -> None:
    api.add({"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10})
    with subprocess.Popen(
        [*CLI, "run", str(doc)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as run:
        try:
            api.wait_paused()
            wait_for(lambda: "word9" in doc.read_text(), "the partial reply")
            run.send_signal(sig)  # what the terminal (or a service manager) sends to agentdoc
            _out, err = run.communicate(timeout=30)
        finally:
            api.release()
            if run.poll() is None:
                run.kill()
    assert run.returncode == 128 + sig, err
    text = doc.read_text()
    assert "agentdoc:reply" not in text and "streaming" not in text, text
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert "word9" in parsed.turns[1].content and "interrupted" in parsed.turns[1].content
    shown = status.read_status(doc)
    assert shown is not None and shown.state in ("idle", "error") and shown.pid is None
    wait_for(lambda: processes_with_env("HOME", env["HOME"]) == [], "the CLI to be gone")


# --- 5. a prompt pending when the daemon starts ------------------------------------------------


def test_a_prompt_pending_at_start_is_named_and_shown_not_sent(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    api.add(ANSWER)
    with watching(doc.parent, env, tmp_path / "watch.log") as daemon:
        wait_for(lambda: state_of(doc) == "pending", 'status "pending"')
        assert "chat.md has an unsent prompt; save it again or run `agentdoc run" in daemon.log()
        [entry] = status_json(doc.parent, env)["documents"]
        assert entry["state"] == "pending"
        shown = run_cli(["status", str(doc)], env)
        assert "chat.md: pending" in shown.stdout
        assert api.requests == []
        doc.write_text(doc.read_text())  # saved again, unchanged (Vim's :w does exactly this)
        wait_for(lambda: "A borrow is a reference." in doc.read_text(), "the reply")
    assert sent_prompts(api) == [PROMPT]


# --- 4. text typed below a streaming reply -----------------------------------------------------


def test_text_typed_below_a_streaming_reply_is_not_sent_until_saved_after_it(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    doc.write_text(DOC.replace(PROMPT, ""))
    api.add({"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10}, ANSWER)
    with watching(doc.parent, env, tmp_path / "watch.log"):
        doc.write_text(DOC)
        api.wait_paused()
        wait_for(lambda: "word9" in doc.read_text(), "the partial reply")
        doc.write_text(doc.read_text() + "\na note to self\n")  # typed below the reply, saved
        api.release()
        # Once the reply is done, the status says why the note below it waits (issue 17 §5).
        wait_for(lambda: "word59" in doc.read_text() and state_of(doc) == "pending", "the reply")
        held = status.read_status(doc)
        assert held is not None and "save the document to send it" in (held.held or "")
        # The fresh heading sits above the note, so it looks like a prompt: it is not sent.
        assert document.parse(doc.read_text()).pending_prompt() == "a note to self"
        with pytest.raises(TimeoutError):
            api.wait_for_requests(2, timeout=2.0)
        doc.write_text(doc.read_text().replace("a note to self", "A question, then?"))
        wait_for(lambda: "A borrow is a reference." in doc.read_text(), "the second reply")
    assert sent_prompts(api) == [PROMPT, "A question, then?"]


def test_deleting_the_reply_text_but_not_its_heading_leaves_no_stray_heading(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], doc: Path
) -> None:
    with mid_reply(tmp_path, api, env, doc) as text:
        kept = text[: text.index("## Assistant")] + "## Assistant\n"
        doc.write_text(kept)
        wait_for(lambda: state_of(doc) == "idle", "the cancel")
        api.release()
    assert doc.read_text() == kept
    assert roles(doc) == ["user", "assistant"]
