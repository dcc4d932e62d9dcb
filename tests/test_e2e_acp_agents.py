"""Gemini CLI, Codex and OpenCode through agentdoc: `agentdoc watch` and a document, as a person
uses them, with the real agents on the project's offline fakes.

For each agent one daemon, one fake API and one document carry a conversation turn by turn (the
agents take seconds to start, so the module shares them): a reply streams into the document,
thinking goes to the sidecar only, the second turn keeps the first's context in the same warm
process, a write is approved by ticking a box and runs, a rejected one does not, cancel stops a
reply mid-way, and an API error leaves a callout with the prompt still pending.
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI, ScriptEntry
from agentdoc.document import parser as document
from tests.agents_support import AGENTS, WRITE_TOOLS, agent_command, agent_env, fake_api_for
from tests.conftest import wait_for
from tests.e2e_support import REPO_ROOT
from tests.process_support import (
    WatchProcess,
    base_env,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
    watching,
)

pytestmark = pytest.mark.e2e

DOC = "---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\n"
APPROVAL = "<!-- agentdoc:approval "
# The option names each agent offers for a permission request (one box each in the document).
ALLOW = {"gemini": "Allow", "codex": "Yes, proceed", "opencode": "Allow once"}
REJECT = {
    "gemini": "Reject",
    "codex": "No, and tell Codex what to do differently",
    "opencode": "Reject",
}
TIMEOUT = 60.0
ENDED = ("idle", "error")


@dataclass
class Served:
    name: str
    api: FakeMessagesAPI
    env: dict[str, str]
    agent_home: Path
    folder: Path
    doc: Path
    daemon: WatchProcess

    def agent_processes(self) -> list[int]:
        """The agent's own processes (they alone have its scratch HOME)."""
        return sorted(processes_with_env("HOME", str(self.agent_home)))

    def script(self, *entries: ScriptEntry) -> None:
        """What the model answers next; whatever an earlier turn left unanswered is dropped
        (Codex's "no" ends a turn before the reply scripted after the tool call)."""
        self.api.clear()
        self.api.add(*entries)

    def ask(self, prompt: str) -> None:
        text = self.doc.read_text()
        assert text.endswith("## User\n\n"), text[-300:]
        self.doc.write_text(text + prompt + "\n")

    def reply(self, n: int) -> str:
        return document.parse(self.doc.read_text()).turns[2 * n - 1].content

    def idle_with(self, text: str) -> None:
        wait_for(
            lambda: text in self.doc.read_text() and state_of(self.doc) == "idle",
            what=f"{text!r} in the document",
            timeout=TIMEOUT,
        )


def _config(path: Path, name: str, env: dict[str, str]) -> Path:
    """The user's config: quick settles, and the agent's command with its offline environment."""
    lines = ["settle_step = 0.1", "settle_max = 1.0", "flush_interval = 0.05", ""]
    lines += [f"[agents.{name}]", f"command = {json.dumps(agent_command(name))}", ""]
    lines += [f"[agents.{name}.env]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=AGENTS)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name = str(request.param)
    root = tmp_path_factory.mktemp(f"{name}-served")
    folder, agent_home, home = root / "docs", root / "agent-home", root / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text(DOC.format(name=name))
    with fake_api_for(name) as api:
        agent = agent_env(name, api, agent_home)
        config = _config(root / "config.toml", name, agent)
        env = base_env(home, AGENTDOC_CONFIG=str(config))
        if os.environ.get("PYTHONPATH"):  # the daemon runs this tree's agentdoc
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        else:
            env["PYTHONPATH"] = str(REPO_ROOT)
        with watching(folder, env, root / "watch.log") as daemon:
            yield Served(name, api, env, agent_home, folder, doc, daemon)
            daemon.send(signal.SIGTERM)  # a daemon that stops closes its warm agents
            daemon.wait(30)
        leftovers = processes_with_env("HOME", str(agent_home))
        kill_all(leftovers)
        assert not leftovers, f"{name} outlived the daemon that started it: {leftovers}"


def test_a_reply_streams_into_the_document_and_thinking_into_the_sidecar(served: Served) -> None:
    thought = "Considering the sky's colour."
    served.script(
        {
            "content": [
                {"type": "thinking", "thinking": thought},
                {"type": "text", "text": "The sky is blue because of Rayleigh scattering."},
            ],
            # Thinking and text deltas both count: Gemini sends the thought whole, the others
            # word by word (4); either way the first words of the text are out, "Rayleigh" not.
            "pause_after_deltas": 7,
        }
    )
    served.ask("Why is the sky blue?")
    served.api.wait_paused(timeout=TIMEOUT)
    wait_for(
        lambda: "The sky is" in served.doc.read_text(), "partial text", timeout=TIMEOUT
    )  # visible while the model is still held mid-reply
    assert "Rayleigh" not in served.doc.read_text()
    served.api.release()
    served.idle_with("because of Rayleigh scattering.")
    text = served.doc.read_text()
    assert thought not in text and "****" not in text
    sidecar = served.doc.with_name("chat.thinking.md")
    assert thought in sidecar.read_text()
    assert "****" not in sidecar.read_text()  # Gemini's empty title stays out


def test_the_second_turn_keeps_the_context_in_the_same_process(served: Served) -> None:
    before = served.agent_processes()
    assert before, "no warm agent process after the first turn"
    served.script([{"type": "text", "text": "You asked about the sky."}])
    served.ask("What did I ask before?")
    served.idle_with("You asked about the sky.")
    assert served.agent_processes() == before
    texts = served.api.user_texts(served.api.requests[-1])
    assert any("Why is the sky blue?" in t for t in texts)
    assert texts[-1].endswith("What did I ask before?")


def _tick(served: Served, label: str, below: str = "") -> None:
    text = served.doc.read_text()
    # The whole label: Gemini's "Allow" box comes after "Allow for this session".
    box = re.search(rf"^> - \[ \] {re.escape(label)}[ \t]*\n", text, re.MULTILINE)
    assert box is not None, text[-1500:]
    line = box[0].replace("[ ]", "[x]", 1)
    served.doc.write_text(text[: box.start()] + line + below + text[box.end() :])


def _waiting(served: Served) -> bool:
    return state_of(served.doc) == "waiting" and APPROVAL in served.doc.read_text()


def test_a_write_approved_in_the_document_runs(served: Served) -> None:
    out = served.folder / "allowed.txt"
    write = WRITE_TOOLS[served.name](served.folder, "allowed.txt", "approved text")
    served.script([write], [{"type": "text", "text": "Written as asked."}])
    served.ask("Please write allowed.txt.")
    wait_for(lambda: _waiting(served), "the approval block", timeout=TIMEOUT)
    assert not out.exists()
    _tick(served, ALLOW[served.name])
    served.idle_with("Written as asked.")
    assert out.read_text() == "approved text"
    text = served.doc.read_text()
    assert APPROVAL not in text and "allowed in the document" in text


def test_a_write_rejected_with_a_reason_does_not_run(served: Served) -> None:
    out = served.folder / "rejected.txt"
    write = WRITE_TOOLS[served.name](served.folder, "rejected.txt", "must not appear")
    served.script([write], [{"type": "text", "text": "Left alone."}])
    served.ask("Please write rejected.txt.")
    wait_for(lambda: _waiting(served), "the approval block", timeout=TIMEOUT)
    _tick(served, REJECT[served.name], below="> Not that file, please.\n")
    # Codex's "no" ends the whole turn (it says cancelled; agentdoc takes that as the turn's end
    # since it sent no cancel); the others go on to answer.
    wait_for(lambda: state_of(served.doc) in ENDED, "the turn's end", timeout=TIMEOUT)
    assert not out.exists()
    text = served.doc.read_text()
    assert APPROVAL not in text and "denied in the document: Not that file, please." in text


def test_cancel_stops_a_reply_mid_way(served: Served) -> None:
    served.script(
        {"content": [{"type": "text", "text": "A long story begins here and goes on"}],
         "pause_after_deltas": 3}
    )  # fmt: skip
    served.ask("Tell me a long story.")
    served.api.wait_paused(timeout=TIMEOUT)
    wait_for(lambda: "A long story" in served.doc.read_text(), "partial text", timeout=TIMEOUT)
    cancelled = run_cli(["cancel", str(served.doc)], served.env, timeout=TIMEOUT)
    assert cancelled.returncode == 0, cancelled.stderr
    wait_for(lambda: state_of(served.doc) == "idle", "the cancelled turn", timeout=TIMEOUT)
    served.api.release()
    text = served.doc.read_text()
    assert "A long story" in text and "goes on" not in text
    assert "interrupted" in text.lower() or "cancelled" in text.lower()


def test_an_api_error_leaves_a_callout_and_the_prompt_pending(served: Served) -> None:
    served.script({"status": 400, "message": "fake API refused this", "times": "always"})
    served.ask("This one fails.")
    wait_for(
        lambda: (
            "fake API refused this" in served.doc.read_text()
            and state_of(served.doc) in ("idle", "error")
        ),
        "the failure callout",
        timeout=TIMEOUT,
    )
    served.api.clear()
    parsed = document.parse(served.doc.read_text())
    assert parsed.pending_prompt() == "This one fails."
