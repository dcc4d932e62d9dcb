"""`agentdoc doctor` against the real ACP agents: ✓ with credentials (the project's fake APIs and
a key in a scratch home), "not logged in" without, as the agent itself tells it: Gemini CLI
refuses the session (-32000), claude-agent-acp (configured only as `[agents.claude-acp]`) and
codex-acp open it but say so in `_auth/status_update`. OpenCode does not tell (it has free
models of its own), so it is not here."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.agents import agent_command, agent_env, fake_api_for
from tests.support.processes import base_env, kill_all, processes_with_env, run_cli

pytestmark = pytest.mark.e2e


def _without_codex_login(env: dict[str, str]) -> None:
    # With a custom provider Codex counts as logged in whatever its key: a person without a
    # login has its default provider (OpenAI) and no key.
    (Path(env["CODEX_HOME"]) / "config.toml").write_text("", encoding="utf-8")
    del env["FAKE_OPENAI_KEY"]


def _without(key: str) -> Callable[[dict[str, str]], None]:
    return lambda env: env.__delitem__(key)


# How each agent's environment (`agent_env`) loses its credentials.
LOG_OUT: dict[str, Callable[[dict[str, str]], None]] = {
    "claude-acp": _without("ANTHROPIC_API_KEY"),
    "gemini": _without("GEMINI_API_KEY"),
    "codex": _without_codex_login,
}


def doctor_check(tmp_path: Path, name: str, logged_in: bool) -> dict[str, str]:
    agent_home, home = tmp_path / "agent-home", tmp_path / "home"
    agent_home.mkdir()
    home.mkdir()
    with fake_api_for(name) as api:
        env = agent_env(name, api, agent_home)
        if not logged_in:
            LOG_OUT[name](env)
        lines = [f"[agents.{name}]", f"command = {json.dumps(agent_command(name))}", ""]
        lines += [f"[agents.{name}.env]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]
        config = tmp_path / "config.toml"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        state = str(tmp_path / "state")
        done = run_cli(
            ["doctor", "--json", str(tmp_path)],
            base_env(home, AGENTDOC_CONFIG=str(config), AGENTDOC_STATE_DIR=state),
            timeout=120,
        )
    leftovers = processes_with_env("HOME", str(agent_home))
    kill_all(leftovers)
    assert not leftovers, f"{name} outlived doctor: {leftovers}"
    checks = json.loads(done.stdout)["checks"]
    return next(c for c in checks if c["name"] == f"agent {name}")


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
