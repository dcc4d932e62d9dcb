"""`agentdoc doctor` against the real ACP agents: ✓ with credentials (the project's fake APIs and
a key in a scratch home), "not logged in" without, as the agent itself tells it: Gemini CLI
refuses the session (-32000), claude-agent-acp (configured only as `[agents.claude-acp]`) and
codex-acp open it but say so in `_auth/status_update`. OpenCode does not tell (it has free
models of its own), so it is not here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.agents import (
    LOG_OUT,
    agent_command,
    agent_env,
    doctor_check,
    fake_api_for,
)
from tests.support.processes import base_env, kill_all, processes_with_env, run_cli

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("name", sorted(LOG_OUT))
def test_an_agent_with_credentials_is_ready(tmp_path: Path, name: str) -> None:
    check = doctor_check(tmp_path, name, logged_in=True)
    assert check["outcome"] == "ok", check
    assert "not logged in" not in check["detail"]


@pytest.mark.parametrize("name", sorted(LOG_OUT))
def test_an_agent_without_credentials_is_not_logged_in(tmp_path: Path, name: str) -> None:
    check = doctor_check(tmp_path, name, logged_in=False)
    assert check["outcome"] == "warn", check  # not the default agent: only a warning
    assert "not logged in" in check["detail"], check
    assert f"[agents.{name}.env]" in check["fix"]


def test_status_tells_what_a_turn_saw_the_agent_offer_without_starting_it(tmp_path: Path) -> None:
    """claude-acp, configured only as `[agents.claude-acp]`: after one turn, `agentdoc status`
    names the mode agentdoc's default policy became and the models it offered."""
    name = "claude-acp"
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text(f"---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\nSay hello.\n")
    with fake_api_for(name) as api:
        env = agent_env(name, api, agent_home)
        lines = [f"[agents.{name}]", f"command = {json.dumps(agent_command(name))}", ""]
        lines += [f"[agents.{name}.env]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]
        config = tmp_path / "config.toml"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cli_env = base_env(home, AGENTDOC_CONFIG=str(config))
        api.add([{"type": "text", "text": "Hello there."}])
        done = run_cli(["run", str(doc)], cli_env, timeout=120)
        assert done.returncode == 0, done.stderr
    leftovers = processes_with_env("HOME", str(agent_home))
    kill_all(leftovers)
    shown = run_cli(["status", str(doc)], cli_env)
    assert shown.returncode == 0, shown.stderr
    assert "  agent: claude-acp\n" in shown.stdout
    assert "  permission_mode: default → default\n" in shown.stdout, shown.stdout
    assert "it offers (as it said on " in shown.stdout
    report = json.loads(run_cli(["status", "--json", str(doc)], cli_env).stdout)
    offered = report["agent"]["offered"]
    assert "default" in offered["mode"] and "haiku" in offered["model"], offered
