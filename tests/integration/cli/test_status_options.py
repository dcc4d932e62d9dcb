"""`agentdoc status` tells each document's agent and what it is set to, without starting it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.agents.base.offers import Offer, remember
from agentdoc.cli import cli
from agentdoc.records import Status, now_iso, write_status
from tests.support.acp import tiny_agent


def status(*args: str) -> str:
    result = CliRunner().invoke(cli, ["status", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def document(path: Path, meta: str) -> Path:
    path.write_text(f"---\nagentdoc:\n{meta}---\n\n## User\n\nhello\n", encoding="utf-8")
    return path


@pytest.fixture
def mine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config with one ACP agent of the user's own (a tiny stand-in) and a policy."""
    program = tiny_agent(tmp_path, "my-agent-bin")
    config = tmp_path / "config.toml"
    config.write_text(
        f'permission_mode = "default"\neffort = "low"\n[agents.mine]\ncommand = ["{program}"]\n'
    )
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    return program


def test_claude_documents_show_the_mode_and_choices_agentdoc_gives_the_cli(
    tmp_path: Path,
) -> None:
    doc = document(tmp_path / "a.md", "  model: haiku\n  effort: high\n")
    output = status(str(doc))
    assert "  agent: claude\n  model: haiku\n  effort: high\n" in output
    assert "  permission_mode: default → default\n" in output
    assert "effort: low, medium, high, xhigh, max" in output


def test_an_acp_agent_never_started_says_where_to_look(mine: Path, tmp_path: Path) -> None:
    doc = document(tmp_path / "a.md", "  agent: mine\n")
    output = status(str(doc))
    assert "  agent: mine\n  model: the agent's default\n  effort: low\n" in output
    assert "  permission_mode: default → not known yet\n" in output
    assert "run `agentdoc doctor` to see what mine offers" in output


def test_what_doctor_saw_the_agent_offer_is_shown_later(
    healthy: Path,
    mine: Path,
    tmp_path: Path,
) -> None:
    doc = document(tmp_path / "a.md", "  agent: mine\n  model: m2\n")
    assert CliRunner().invoke(cli, ["doctor", str(tmp_path)]).exit_code == 0
    os.chmod(mine, 0o644)  # status must not start it: it could not now
    output = status(str(doc))
    assert "  permission_mode: default → ask\n" in output  # the tiny agent's asking mode
    assert "it offers (as it said on " in output
    assert "model: m1, m2; mode: ask, yolo" in output
    report = json.loads(status("--json", str(doc)))
    assert report["agent"]["agent"] == "mine"
    assert report["agent"]["mode"] == "ask"
    assert report["agent"]["model"] == "m2"
    assert report["agent"]["offered"] == {"model": ["m1", "m2"], "mode": ["ask", "yolo"]}


def test_the_tree_listing_names_each_documents_agent_briefly(mine: Path, tmp_path: Path) -> None:
    for name, meta in (("a.md", "  agent: mine\n  model: m1\n"), ("b.md", "  effort: max\n")):
        write_status(
            document(tmp_path / name, meta), Status(document=name, state="idle", updated=now_iso())
        )
    lines = status(str(tmp_path)).splitlines()
    assert any(
        line.startswith("a.md: idle")
        and line.endswith("— agent mine (model m1, effort low, default → ?)")
        for line in lines
    ), lines
    assert any(
        line.startswith("b.md: idle")
        and line.endswith("— agent claude (effort max, default → default)")
        for line in lines
    ), lines
    report = json.loads(status("--json", str(tmp_path)))
    agents = {d["document"]: d["agent"]["agent"] for d in report["documents"]}
    assert agents == {"a.md": "mine", "b.md": "claude"}


def test_a_document_naming_an_unknown_agent_says_so(tmp_path: Path) -> None:
    doc = document(tmp_path / "a.md", "  agent: nobody\n")
    output = status(str(doc))
    assert "  agent: agent 'nobody' is not an agent's name; known agents:" in output


def test_a_broken_config_still_lets_status_tell_the_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("permission_mode = [\n")
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    doc = document(tmp_path / "a.md", "  agent: mine\n")
    output = status(str(doc))
    assert "a.md: idle (no turn has run in it yet)" in output
    assert f"  agent: cannot read config file {config}" in output


def test_the_policy_is_told_by_what_each_mode_means_and_a_refusal_plainly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Qwen Code's `auto-edit` is acceptEdits; pi, whose modes are thinking levels, waits
    (unless its own entry lets it run unasked), and status says what lets it run."""
    config = tmp_path / "config.toml"
    config.write_text(
        'permission_mode = "acceptEdits"\n'
        '[agents.qwen]\ncommand = ["qwen", "--acp"]\n'
        '[agents.pi]\ncommand = ["pi-acp"]\n'
        '[agents.trusted-pi]\ncommand = ["pi-acp", "--again"]\n'
        'permission_mode = "bypassPermissions"\n'
    )
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    qwen = {"plan": "plan", "default": "ask", "auto-edit": "edits", "auto": "auto", "yolo": "all"}
    remember("qwen", ["qwen", "--acp"], Offer({"mode": list(qwen)}, stances=qwen))
    pi = Offer({"mode": ["off", "high"]}, stances={"off": "other", "high": "other"})
    remember("pi", ["pi-acp"], pi)
    remember("trusted-pi", ["pi-acp", "--again"], pi)
    shown = status(str(document(tmp_path / "q.md", "  agent: qwen\n")))
    assert "  permission_mode: acceptEdits → auto-edit\n" in shown
    shown = status(str(document(tmp_path / "p.md", "  agent: pi\n")))
    assert "  permission_mode: acceptEdits → none: its turns wait\n" in shown
    assert "note: pi has no mode that asks before it runs a tool (it offers: off, high)" in shown
    assert 'set permission_mode = "bypassPermissions" under [agents.pi]' in shown
    shown = status(str(document(tmp_path / "t.md", "  agent: trusted-pi\n")))
    assert "  permission_mode: bypassPermissions → its own\n" in shown
    assert "note:" not in shown
