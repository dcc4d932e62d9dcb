"""Whether an agent keeps the text of a reply cut short in its own session is a fact of that
agent (its quirks row), not of its protocol: for one that keeps it the document says so and the
next prompt does not paste it again; for one that drops it the next prompt carries it.

The scripted ACP agent names itself as each agent does (`agentInfo.name`), through `agentdoc
run` and `agentdoc cancel` as separate processes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.acp import FakeAgent, chunk, doc_text
from tests.support.processes import CLI, base_env, run_cli
from tests.support.waiting import wait_for


def script(name: str, cut: bool) -> dict[str, object]:
    """A process of the agent: it cuts its reply short (till the cancel), or answers."""
    info = {"name": name, "version": "1"}
    caps = {"loadSession": True}
    initialize = {"result": {"protocolVersion": 1, "agentCapabilities": caps, "agentInfo": info}}
    prompt: dict[str, object] = {"steps": [chunk("Done.")]}
    if cut:
        prompt = {
            "steps": [chunk("The first half"), {"until_cancel": True}],
            "result": {"stopReason": "cancelled"},
        }
    return {"initialize": initialize, "session/prompt": prompt}


@pytest.mark.parametrize(
    ("name", "kept"), [("qwen-code", True), ("pi-acp", False), ("fake-acp", False)]
)
def test_a_cut_reply_is_pasted_again_only_for_an_agent_that_dropped_it(
    tmp_path: Path, name: str, kept: bool
) -> None:
    agent = FakeAgent(tmp_path, script(name, cut=True))
    config = tmp_path / "config.toml"
    command = ", ".join(f'"{part}"' for part in agent.command)
    config.write_text(f"warm_sessions = 0\n[agents.fake]\ncommand = [{command}]\n")
    env = base_env(tmp_path / "home", AGENTDOC_CONFIG=str(config))
    (tmp_path / "home").mkdir()
    doc = tmp_path / "chat.md"
    doc.write_text(doc_text())
    with subprocess.Popen([*CLI, "run", str(doc)], env=env, stdout=subprocess.PIPE) as running:
        try:
            wait_for(lambda: "The first half" in doc.read_text(), "the partial reply")
            assert run_cli(["cancel", str(doc)], env).returncode == 0
            running.wait(30)
        finally:
            if running.poll() is None:
                running.kill()
    text = doc.read_text()
    assert "interrupted" in text
    assert ("the agent will not remember it" in text) is not kept, text
    assert ("keeps it in its session" in text) is kept, text
    agent.script.write_text(json.dumps(script(name, cut=False)))  # the next run's process
    doc.write_text(text + "Go on.\n")
    done = run_cli(["run", str(doc)], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Done." in doc.read_text()
    last = agent.prompts()[-1]
    assert last.endswith("Go on.")
    assert ("The first half" in last) is not kept, last
