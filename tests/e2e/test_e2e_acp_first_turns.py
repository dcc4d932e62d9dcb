"""Every first turn is warm over ACP too: `agentdoc watch` starts a document's real agent, shakes
hands and opens its session before the prompt is saved.

A new document, one with history but no session, and one switched to an ACP agent each get
their agent (handshake and `session/new` done) when the editor opens them or the save that
leaves an empty `## User`, and the prompt saved afterwards runs in that very process. Nothing is
timed: an agent alive with its session open before the save, and the same agent answering, is
what shows it.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.document import parser as document
from tests.support.agents import agent_config, agent_env, fake_api_for
from tests.support.editors import HISTORY, editor, open_in_editor, vim
from tests.support.paths import REPO_ROOT
from tests.support.processes import (
    WatchProcess,
    base_env,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

AGENT = "opencode"  # the quickest of the three to start
OPENED_AHEAD = "session opened ahead of the prompt"
TIMEOUT = 60.0


@dataclass
class Served:
    api: FakeMessagesAPI
    env: dict[str, str]
    agent_home: Path
    daemon: WatchProcess

    def agents(self) -> list[int]:
        """The agent's own processes (they alone have its scratch HOME)."""
        return sorted(processes_with_env("HOME", str(self.agent_home)))

    def ready_ahead(self) -> list[int]:
        """Wait for the agent started ahead with its session open; its processes."""
        wait_for(lambda: OPENED_AHEAD in self.daemon.log(), OPENED_AHEAD, timeout=TIMEOUT)
        assert self.api.requests == []  # ready, and nothing asked of the model yet
        return self.agents()

    def ask(self, doc: Path, prompt: str, reply: str) -> None:
        text = doc.read_text()
        assert text.endswith("## User\n\n"), text[-200:]
        doc.write_text(text + prompt + "\n")
        wait_for(
            lambda: reply in doc.read_text() and state_of(doc) == "idle",
            what=reply,
            timeout=TIMEOUT,
        )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    with fake_api_for(AGENT) as api:
        config = agent_config(tmp_path / "config.toml", AGENT, agent_env(AGENT, api, agent_home))
        env = base_env(home, AGENTDOC_CONFIG=str(config))
        env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(REPO_ROOT)
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            yield Served(api, env, agent_home, daemon)
            daemon.send(signal.SIGTERM)  # a daemon that stops closes its warm agents
            daemon.wait(30)
    leftovers = processes_with_env("HOME", str(agent_home))
    kill_all(leftovers)
    assert not leftovers, f"{AGENT} outlived the daemon that started it: {leftovers}"


def test_a_new_document_has_its_agent_and_session_before_its_first_prompt(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "idea.md"
    made = run_cli(["new", "--agent", AGENT, str(doc)], served.env)
    assert made.returncode == 0, made.stderr
    open_in_editor(doc, tmp_path / "home")
    ahead = served.ready_ahead()
    assert ahead
    served.api.add([{"type": "text", "text": "A fresh answer."}])
    served.ask(doc, "A first question?", "A fresh answer.")
    assert served.agents() == ahead
    assert document.parse(doc.read_text()).meta.session  # the session opened ahead


def test_an_imported_document_has_its_agent_ready_and_sends_the_transcript(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "imported.md"
    doc.write_text(f"---\nagentdoc: {{agent: {AGENT}}}\n---\n" + HISTORY)
    open_in_editor(doc, tmp_path / "home")
    ahead = served.ready_ahead()
    served.api.add([{"type": "text", "text": "Lyon is second."}])
    served.ask(doc, "And the second city?", "Lyon is second.")
    assert served.agents() == ahead
    # Its first prompt carried the history the new session did not have.
    texts = served.api.user_texts(served.api.requests[-1])
    assert any("capital of France" in text for text in texts), texts


def test_a_document_switched_to_an_acp_agent_has_it_before_the_prompt(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "switch.md"
    doc.write_text(
        "---\nagentdoc: {agent: claude, session: c-1, session_agent: claude}\n---\n" + HISTORY
    )
    # The person switches the agent in their editor and saves; the prompt comes later.
    editor(
        vim(f"edit {doc}", f"%s/agent: claude, session/agent: {AGENT}, session/", "write"),
        tmp_path / "home",
    )
    ahead = served.ready_ahead()
    served.api.add([{"type": "text", "text": "OpenCode here."}])
    served.ask(doc, "Who is this?", "OpenCode here.")
    assert served.agents() == ahead
    meta = document.parse(doc.read_text()).meta
    assert meta.agent == AGENT and meta.session not in (None, "c-1")
