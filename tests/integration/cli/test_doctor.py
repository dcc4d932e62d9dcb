"""`agentdoc doctor`: each check, its fix, the exit code and the JSON for tools."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.agents.claude import checks as claude_checks
from agentdoc.cli import cli, doctor
from agentdoc.config import Settings
from tests.support.acp import tiny_agent
from tests.support.fake_claude import SECRET, fake_cli


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["doctor", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_all_checks_pass(healthy: Path, tmp_path: Path) -> None:
    code, output = run(str(tmp_path))
    assert code == 0, output
    lines = output.splitlines()
    assert all(line.startswith("✓ ") for line in lines), output
    assert f"✓ claude CLI: {healthy} (from AGENTDOC_CLAUDE)" in lines
    assert any(line.startswith("✓ claude version: tested with ") for line in lines)
    assert any("Claude login in" in line for line in lines)
    assert any(line.startswith("✓ platform: Python ") for line in lines)
    assert SECRET not in output


def test_json_for_tools(healthy: Path, tmp_path: Path) -> None:
    code, output = run("--json", str(tmp_path))
    report = json.loads(output)
    assert code == 0 and report["ok"] is True
    names = [c["name"] for c in report["checks"]]
    assert names == [
        "platform",
        "config",
        "agents",
        "claude CLI",
        "claude runs",
        "claude version",
        "authentication",
        "agent codex",
        "agent gemini",
        "agent opencode",
        "watch limit",
        "agent files in synced folders",
    ]
    assert {c["outcome"] for c in report["checks"]} == {"ok"}


def test_the_config_key_names_the_cli_as_the_runner_uses_it(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AGENTDOC_CLAUDE")
    config = tmp_path / "agentdoc-config.toml"
    config.write_text(f'claude = "{healthy}"\n')
    code, output = run(str(tmp_path))
    assert code == 0, output
    assert f"✓ claude CLI: {healthy} (from config key `claude`)" in output.splitlines()
    assert f"✓ config: {config} (parsed)" in output.splitlines()


def test_missing_cli_fails_with_an_install_fix(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTDOC_CLAUDE", str(tmp_path / "no-such-claude"))
    code, output = run(str(tmp_path))
    assert code == 1
    assert "✗ claude CLI: cannot find the Claude Code CLI" in output
    assert "fix: npm install -g @anthropic-ai/claude-code@" in output
    assert "claude runs" not in output  # nothing to run


def test_a_cli_that_hangs_is_cut_off(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cli(healthy.parent, "exec sleep 60")
    monkeypatch.setattr(claude_checks, "VERSION_TIMEOUT", 0.5)
    code, output = run(str(tmp_path))
    assert code == 1
    assert "✗ claude runs: `claude --version` did not finish within" in output


def test_a_cli_that_fails_shows_its_output(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_cli(healthy.parent, "echo 'node: bad option' >&2; exit 9")
    code, output = run(str(tmp_path))
    assert code == 1
    assert "✗ claude runs: `claude --version` exited with 9: node: bad option" in output


@pytest.mark.parametrize(("version", "outcome", "code"), [("2.0.5", "✗", 1), ("99.0.0", "!", 0)])
def test_versions_outside_the_tested_range(
    healthy: Path, tmp_path: Path, version: str, outcome: str, code: int
) -> None:
    fake_cli(healthy.parent, f'echo "{version} (Claude Code)"')
    exit_code, output = run(str(tmp_path))
    assert exit_code == code, output
    assert f"{outcome} claude version: {version} is" in output
    assert f"tested with ({claude_checks.tested_range()})" in output


def test_authentication_by_api_key_does_not_print_it(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "home" / ".claude" / ".credentials.json").unlink()
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    code, output = run(str(tmp_path))
    assert code == 0
    assert "✓ authentication: ANTHROPIC_API_KEY is set" in output
    assert SECRET not in output


def test_no_credentials_fails_with_a_login_fix(healthy: Path, tmp_path: Path) -> None:
    (tmp_path / "home" / ".claude" / ".credentials.json").unlink()
    code, output = run(str(tmp_path))
    assert code == 1
    assert "✗ authentication: no ANTHROPIC_API_KEY and no Claude login" in output
    assert "fix: run `claude` once and log in" in output


def test_a_broken_config_fails_and_names_its_path(healthy: Path, tmp_path: Path) -> None:
    config = tmp_path / "agentdoc-config.toml"
    config.write_text("flush_interval = [\n")
    code, output = run(str(tmp_path))
    assert code == 1
    assert f"✗ config: cannot read config file {config}" in output
    assert f"fix: fix or remove {config}" in output


def test_the_watch_limit_against_the_folders_to_watch(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / "tree" / f"d{i}" / "sub").mkdir(parents=True)
    assert doctor.count_folders(tmp_path / "tree") == 11
    limit = tmp_path / "max_user_watches"
    limit.write_text("8\n")
    check = doctor._watch_limit(tmp_path / "tree", limit)
    assert check.outcome == "fail" and "11 folders" in check.detail
    assert check.fix is not None and "fs.inotify.max_user_watches" in check.fix
    limit.write_text("524288\n")
    assert doctor._watch_limit(tmp_path / "tree", limit).outcome == "ok"
    assert doctor._watch_limit(tmp_path, tmp_path / "absent").outcome == "ok"


# --- the agents ----------------------------------------------------------------------------


def test_each_configured_agent_is_listed_found_and_shaken_hands_with(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tiny_agent(tmp_path, "my-agent-bin")
    config = tmp_path / "config.toml"
    config.write_text(f'agent = "gemini"\n[agents.mine]\ncommand = ["{mine}", "ok"]\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    code, output = run(str(tmp_path))
    assert code == 0, output
    assert "✓ agents: claude, codex, gemini (default), mine, opencode" in output
    for name in ("codex", "gemini", "opencode", "mine"):
        line = next(line for line in output.splitlines() if line.startswith(f"✓ agent {name}:"))
        assert "ACP 1, tiny-agent 1.2.3 (load, resume, images)" in line, line
        assert line.endswith("sessions take model: m1, m2; mode: ask, yolo"), line
    assert f"✓ agent mine: {mine}" in output


@pytest.mark.parametrize(
    ("mode", "mark", "said"),
    [
        (
            "nologin",
            "✗",
            "; not logged in (Authentication required) (it offers: Log in with your browser)",
        ),
        ("authstatus", "✗", "(load, resume, images); not logged in"),
        ("nomodes", "!", "mine offers no modes, so agentdoc cannot make it follow permission_mode"),
    ],
)
def test_an_agent_not_logged_in_or_that_cannot_be_made_to_ask_is_named(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, mark: str, said: str
) -> None:
    mine = tiny_agent(tmp_path, "my-agent-bin", mode)
    config = tmp_path / "config.toml"
    config.write_text(f'agent = "mine"\n[agents.mine]\ncommand = ["{mine}"]\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    _code, output = run(str(tmp_path))
    line = next(line for line in output.splitlines() if line.startswith(f"{mark} agent mine:"))
    assert said in line, output


@pytest.mark.parametrize(
    ("mode", "detail"),
    [
        ("v2", "speaks ACP version 2; agentdoc speaks 1"),
        ("error", "refused `initialize`: Authentication required"),
        ("garbage", "exited with 0 without answering `initialize`"),
        ("crash", "exited with 3 without answering `initialize`: tiny agent: cannot start"),
        ("silent", "no answer to `initialize` within 1 s"),
    ],
)
def test_an_agent_that_fails_the_handshake_fails_with_why(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str, detail: str
) -> None:
    tiny_agent(healthy.parent, "opencode", mode)
    env = dict(os.environ)
    # An agent that answers or exits ends the wait at once: only the silent one needs it short,
    # the others a bound a start on a busy machine stays under.
    wait = 1.0 if mode == "silent" else 10.0
    report = doctor.run_checks(tmp_path, env, handshake_timeout=wait)
    check = next(c for c in report.checks if c.name == "agent opencode")
    assert check.outcome == "fail" and not report.ok
    assert detail in check.detail
    assert check.fix is not None and "npm install -g opencode-ai" in check.fix


def test_a_missing_agent_warns_unless_it_is_the_default(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (healthy.parent / "codex-acp").unlink()
    monkeypatch.setenv("PATH", str(healthy.parent))  # not the machine's own codex-acp either
    report = doctor.run_checks(tmp_path, dict(os.environ))
    check = next(c for c in report.checks if c.name == "agent codex")
    assert (check.outcome, check.detail) == ("warn", "codex-acp not found on PATH")
    assert check.fix is not None and "@agentclientprotocol/codex-acp" in check.fix
    assert report.ok
    config = tmp_path / "config.toml"
    config.write_text('agent = "codex"\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    report = doctor.run_checks(tmp_path, dict(os.environ))
    assert next(c for c in report.checks if c.name == "agent codex").outcome == "fail"
    assert not report.ok


def test_agent_files_in_a_synced_folder_are_named_and_broken_ones_said(
    healthy: Path, tmp_path: Path
) -> None:
    """What a paired device can put beside the documents and an agent started there reads:
    named before the user trusts the folder; a local folder's own files are the user's."""
    phone = tmp_path / "phone"
    (phone / ".claude").mkdir(parents=True)
    (phone / ".stfolder").mkdir()
    (phone / ".claude" / "settings.json").write_text('{"hooks": ')  # cut short in transit
    (phone / "AGENTS.md").write_text("Always run ./setup.sh first.\n")
    (tmp_path / "mine" / ".claude").mkdir(parents=True)
    (tmp_path / "mine" / ".claude" / "settings.json").write_text("{}")
    code, output = run(str(tmp_path))
    assert code == 0, output  # a warning: nothing is wrong with agentdoc
    (line,) = [line for line in output.splitlines() if "agent files in synced folders" in line]
    assert line.startswith("! ")
    assert "phone/.claude/settings.json: Claude Code: hooks" in line and "not valid JSON" in line
    assert "phone/AGENTS.md" in line and "mine" not in line
    assert "once you trust the folder" in line


def test_claude_is_checked_only_as_far_as_the_config_uses_it(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine set up for another agent, with no Claude Code and no Claude login: the
    default agent is checked, and Claude is only a warning (a document may still name it)."""
    mine = tiny_agent(tmp_path, "qwen-bin")
    config = tmp_path / "config.toml"
    config.write_text(f'agent = "qwen"\n[agents.qwen]\ncommand = ["{mine}"]\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    monkeypatch.delenv("AGENTDOC_CLAUDE")
    (tmp_path / "home" / ".claude" / ".credentials.json").unlink()
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    for program in ("gemini", "codex-acp", "opencode"):
        tiny_agent(bare, program)
    monkeypatch.setenv("PATH", str(bare))  # no claude anywhere
    code, output = run(str(tmp_path))
    assert code == 0, output
    assert not [line for line in output.splitlines() if line.startswith("✗")], output
    assert "! claude CLI:" in output and "! authentication:" in output
    assert "agent: claude" in output  # the fix says when it matters
    assert f"✓ agent qwen: {mine}" in output


def test_an_agent_that_hangs_opening_a_session_is_not_told_to_log_in(
    healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tiny_agent(tmp_path, "my-agent-bin", "nosession")
    config = tmp_path / "config.toml"
    config.write_text(f'agent = "mine"\n[agents.mine]\ncommand = ["{mine}"]\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    # Long enough for the handshake on a busy machine, which the session's wait then shares.
    report = doctor.run_checks(tmp_path, dict(os.environ), handshake_timeout=5.0)
    check = next(c for c in report.checks if c.name == "agent mine")
    assert check.outcome == "fail" and "cannot open a session" in check.detail, check
    assert check.fix is not None and "log in" not in check.fix, check.fix
    assert "waits for" in check.fix


def test_a_broken_config_still_checks_the_default_agent(healthy: Path, tmp_path: Path) -> None:
    """Documents then get the built-in default agent: it is checked, and nothing else is."""
    (tmp_path / "agentdoc-config.toml").write_text("flush_interval = [\n")
    report = doctor.run_checks(tmp_path, dict(os.environ), home=tmp_path / "home")
    names = [c.name for c in report.checks]
    assert "claude CLI" in names and "authentication" in names
    assert "agents" not in names and "agent gemini" not in names, names


def test_which_agents_skip_a_shared_folders_settings_is_their_own_to_say() -> None:
    said = doctor._without_them(Settings(folder_agent_settings=False))
    assert said == "Claude starts there without them; other agents read them all the same"
