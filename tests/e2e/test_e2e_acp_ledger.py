"""One ledger for ACP agents too: the real OpenCode, on the fake API with a priced model, says
the session's running cost in ACP's `usage_update`; each footer shows its turn's own cost and
`agentdoc status`'s `spent` counts each turn once — across `undo` (a copy of the session that
starts from the turn before's count) and a cancelled reply.

Every turn sends about the same prompt (OpenCode's own system prompt is most of it), so each
costs about what the first did; a footer that counts an earlier turn too reads double.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.agents import agent_command, agent_env, fake_api_for
from tests.support.processes import (
    base_env,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT = 60.0
FOOTER_COST = re.compile(r"<sub>.*?\$(\d+\.\d+)")
WORDS = " ".join(f"word{i}" for i in range(60))


def _config(tmp_path: Path, env: dict[str, str]) -> Path:
    opencode = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    # Dollars per million tokens: OpenCode prices each answer by its usage and says the sum
    # (only for a model whose context window it knows).
    opencode["provider"]["fake"]["models"]["m"] = {
        "cost": {"input": 300.0, "output": 1500.0},
        "limit": {"context": 200_000, "output": 8_192},
    }
    env = env | {"OPENCODE_CONFIG_CONTENT": json.dumps(opencode)}
    lines = ["settle_step = 0.1", "settle_max = 1.0", "flush_interval = 0.05", ""]
    lines += ["[agents.opencode]", f"command = {json.dumps(agent_command('opencode'))}", ""]
    lines += ["[agents.opencode.env]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]
    path = tmp_path / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _ask(doc: Path, prompt: str, reply: str) -> None:
    text = doc.read_text()
    assert text.endswith("## User\n\n"), text[-300:]
    doc.write_text(text + prompt + "\n")
    wait_for(
        lambda: reply in doc.read_text() and state_of(doc) == "idle",
        what=f"{reply!r} in the document",
        timeout=TIMEOUT,
    )


def test_opencode_footers_and_spent_count_each_turn_once(tmp_path: Path) -> None:
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text("---\nagentdoc:\n  agent: opencode\n---\n\n## User\n\n")
    with fake_api_for("opencode") as api:
        env = base_env(
            home, AGENTDOC_CONFIG=str(_config(tmp_path, agent_env("opencode", api, agent_home)))
        )
        try:
            with watching(folder, env, tmp_path / "watch.log"):
                api.add([{"type": "text", "text": "One."}])
                _ask(doc, "First?", "One.")
                api.add([{"type": "text", "text": "Two."}])
                _ask(doc, "Second?", "Two.")
                undone = run_cli(["undo", str(doc)], env)
                assert undone.returncode == 0, undone.stderr
                wait_for(lambda: "Two." not in doc.read_text(), what="the reply taken back")
                api.add([{"type": "text", "text": "Two again."}])
                doc.write_text(doc.read_text().replace("Second?", "Second, again?"))
                wait_for(
                    lambda: "Two again." in doc.read_text() and state_of(doc) == "idle",
                    what="the prompt answered again",
                    timeout=TIMEOUT,
                )
                api.add({"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 5})
                doc.write_text(doc.read_text() + "A long one?\n")
                api.wait_paused()
                wait_for(lambda: "word3" in doc.read_text(), what="the partial reply")
                assert run_cli(["cancel", str(doc)], env).returncode == 0
                wait_for(lambda: state_of(doc) == "idle", what="the cancelled turn to end")
                api.release()
                api.add([{"type": "text", "text": "Four."}])
                _ask(doc, "And now?", "Four.")
                status = run_cli(["status", "--json", str(doc)], env)
        finally:
            kill_all(processes_with_env("HOME", str(agent_home)))

    first, *later = [float(cost) for cost in FOOTER_COST.findall(doc.read_text())]
    assert first > 0 and later, doc.read_text()
    assert all(cost == pytest.approx(first, rel=0.25) for cost in later), (first, later)
    spent = json.loads(status.stdout)["spent"]
    assert spent["total"] == pytest.approx(sum([first, *later]) + first, rel=0.25), spent
