"""`agentdoc undo` after each ACP agent's write tool: Gemini CLI, Codex and OpenCode, real
agents on the offline fakes, run by `agentdoc watch` as a person uses them.

The agent writes a file (approved by ticking its box); `agentdoc undo` takes the file, the reply
and the session's memory of the turn back while the daemon watches; the daemon does not send the
prompt that is pending again; once the person saves it, it goes to the agent's own copy of the
session made right after the turn before (`session/fork`, where the agent offers it) or to a new
session told the conversation before the undone turn, never with the turn itself.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any

import pytest

from agentdoc.document import parser as document
from tests.support.agents import (
    AGENTS,
    WRITE_TOOLS,
    agent_config,
    agent_env,
    fake_api_for,
    is_claude_side_request,
    is_codex_title_request,
    is_title_request,
)
from tests.support.processes import (
    base_env,
    held_reason,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT = 60.0
ALLOW = {"gemini": "Allow", "codex": "Yes, proceed", "opencode": "Allow once", "claude-acp": "Yes"}
# The agents that offer `session/fork`: undo continues their own copy of the session made
# right after each turn; the others get a new session seeded with the transcript.
FORKS = {"codex", "opencode", "claude-acp"}
# Each agent's own calls beside a turn (titles, suggestions), not the turn's request.
_SIDE_CALLS = {"codex": is_codex_title_request, "claude-acp": is_claude_side_request}


def _ask(doc: Path, prompt: str) -> None:
    text = doc.read_text()
    assert text.endswith("## User\n\n"), text[-300:]
    doc.write_text(text + prompt + "\n")


def _idle_with(doc: Path, text: str) -> None:
    wait_for(
        lambda: text in doc.read_text() and state_of(doc) == "idle",
        what=f"{text!r} in the document",
        timeout=TIMEOUT,
    )


def _tick(doc: Path, label: str) -> None:
    text = doc.read_text()
    box = re.search(rf"^> - \[ \] {re.escape(label)}[ \t]*\n", text, re.MULTILINE)
    assert box is not None, text[-1500:]
    doc.write_text(text[: box.start()] + box[0].replace("[ ]", "[x]", 1) + text[box.end() :])


def _history(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Each message of a model call as (role, its text), in the Messages, Responses or Gemini
    shape; Gemini's "model" role reads "assistant"."""
    items = body.get("messages") or body.get("input") or body.get("contents") or []
    said = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("role"), str):
            role = "assistant" if item["role"] == "model" else item["role"]
            said.append((role, "".join(_texts(item.get("content", item.get("parts"))))))
    return said


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for part in value for text in _texts(part)]
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return [value["text"]]
    return []


@pytest.mark.parametrize("name", AGENTS)
def test_undo_takes_back_an_acp_agents_write(name: str, tmp_path: Path) -> None:
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text(f"---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\n")
    out = folder / "written.txt"
    with fake_api_for(name) as api:
        config = agent_config(tmp_path / "config.toml", name, agent_env(name, api, agent_home))
        env = base_env(home, AGENTDOC_CONFIG=str(config))
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            api.add([{"type": "text", "text": "Hello there."}])
            _ask(doc, "Say hello.")
            _idle_with(doc, "Hello there.")

            api.clear()
            api.add(
                [WRITE_TOOLS[name](folder, "written.txt", "the agent's text")],
                [{"type": "text", "text": "Written as asked."}],
            )
            _ask(doc, "Please write written.txt.")
            wait_for(lambda: state_of(doc) == "waiting", "the approval block", timeout=TIMEOUT)
            _tick(doc, ALLOW[name])
            _idle_with(doc, "Written as asked.")
            assert out.read_text() == "the agent's text"
            sent = len(api.requests)

            done = run_cli(["undo", str(doc)], env)
            assert done.returncode == 0, done.stderr
            assert "took turn 2" in done.stdout and "1 file(s) restored" in done.stdout
            assert not out.exists()
            parsed = document.parse(doc.read_text())
            assert parsed.turn_count() == 1
            assert parsed.pending_prompt() == "Please write written.txt."
            assert "Written as asked." not in doc.read_text()
            # Polled in the status: the daemon logs the hold just before it writes it there.
            wait_for(
                lambda: "pending again after `agentdoc undo`" in held_reason(doc),
                "the daemon to hold the prompt",
            )
            assert "pending again after `agentdoc undo`" in daemon.log()
            assert len(api.requests) == sent

            api.clear()
            api.add([{"type": "text", "text": "A fresh start."}])
            doc.write_text(doc.read_text().replace("Please write", "Please do not write"))
            _idle_with(doc, "A fresh start.")
            last = [r for r in api.requests if not _SIDE_CALLS.get(name, is_title_request)(r)][-1]
            sent_body = json.dumps(last.body)
            # Nothing of the undone turn: not its prompt, its reply or its tool call (a session
            # that still held it would send them as earlier messages).
            for undone in ("Please write written.txt.", "Written as asked.", "the agent's text"):
                assert undone not in sent_body, undone
            if name in FORKS:
                # The agent's own copy of the session after turn 1: the earlier exchange is
                # the request's history (the model's own message), not text in the prompt.
                assert "session forked" in doc.read_text()
                history = _history(last.body)
                users = [text for role, text in history if role == "user"]
                assert any("Say hello." in text for text in users[:-1]), history
                assert ("assistant", "Hello there.") in history, history
                assert "Please do not write written.txt." in users[-1], history
            else:
                # A new session, told the conversation before the undone turn in its prompt.
                told = " ".join(api.user_texts(last))
                assert "Say hello." in told and "Hello there." in told
            assert not out.exists()
            daemon.send(signal.SIGTERM)
            daemon.wait(30)
        leftovers = processes_with_env("HOME", str(agent_home))
        kill_all(leftovers)
