"""Which agents a document may name, and how a name that is not one is refused.

A document names an agent, never a command: an unknown name, a list, a string with spaces or
a leading "-" is refused before anything runs (exit 1, the known names listed, the document
untouched). Commands and their environment come only from the user's config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentdoc.agents import AgentSpec, known_agents, resolve_agent
from agentdoc.cli import cli
from agentdoc.config import Settings, load_settings
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError
from tests.support.fake_claude import FakeClaude

BUILTIN_NAMES = "claude, codex, gemini, opencode"


def settings(**raw: Any) -> Settings:
    return Settings.model_validate(raw)


@pytest.mark.parametrize(
    ("raw", "requested", "expected"),
    [
        ({}, None, AgentSpec(name="claude", protocol="claude", command=("claude",), builtin=True)),
        (
            {"claude": "/opt/claude"},
            "claude",
            AgentSpec(name="claude", protocol="claude", command=("/opt/claude",), builtin=True),
        ),
        (
            {},
            "gemini",
            AgentSpec(
                name="gemini",
                protocol="acp",
                command=("gemini", "--acp"),
                env={"GEMINI_CLI_NO_RELAUNCH": "true"},  # one process, not two
                builtin=True,
            ),
        ),
        (
            {},
            "codex",
            AgentSpec(name="codex", protocol="acp", command=("codex-acp",), builtin=True),
        ),
        (
            {},
            "opencode",
            AgentSpec(name="opencode", protocol="acp", command=("opencode", "acp"), builtin=True),
        ),
        (  # the config's default for documents that name none
            {"agent": "codex"},
            None,
            AgentSpec(name="codex", protocol="acp", command=("codex-acp",), builtin=True),
        ),
        (  # a built-in overridden: its protocol stays, the command is the user's, and the
            # user's env goes over the built-in's
            {"agents": {"gemini": {"command": ["/opt/g", "--acp"], "env": {"X": "1"}}}},
            "gemini",
            AgentSpec(
                name="gemini",
                protocol="acp",
                command=("/opt/g", "--acp"),
                env={"GEMINI_CLI_NO_RELAUNCH": "true", "X": "1"},
                builtin=True,
            ),
        ),
        (  # the user's own agent speaks ACP
            {"agents": {"my-agent": {"command": ["/opt/agent/bin/agent", "acp"]}}},
            "my-agent",
            AgentSpec(name="my-agent", protocol="acp", command=("/opt/agent/bin/agent", "acp")),
        ),
    ],
)
def test_resolve_agent(raw: dict[str, Any], requested: str | None, expected: AgentSpec) -> None:
    assert resolve_agent(requested, settings(**raw)) == expected


@pytest.mark.parametrize(
    "requested",
    ["nosuch", "gemini --yolo", "-rf", "--acp", ["gemini", "--yolo"], "../bin/sh", "", "claude "],
)
def test_what_is_not_a_known_name_is_refused_with_the_names(requested: object) -> None:
    with pytest.raises(AgentdocError) as caught:
        resolve_agent(requested, settings())
    assert f"known agents: {BUILTIN_NAMES}" in str(caught.value)


def test_the_users_agents_are_listed_among_the_known() -> None:
    mine = settings(agents={"zed-agent": {"command": ["za"]}, "a1": {"command": ["a1"]}})
    assert list(known_agents(mine)) == ["a1", "claude", "codex", "gemini", "opencode", "zed-agent"]
    with pytest.raises(AgentdocError, match="known agents: a1, claude, codex, gemini, opencode"):
        resolve_agent("nosuch", mine)


def test_claudes_command_names_only_its_program() -> None:
    bad = settings(agents={"claude": {"command": ["claude", "--dangerously-skip-permissions"]}})
    with pytest.raises(AgentdocError, match="only the claude program"):
        known_agents(bad)


def test_an_agents_own_permission_mode_is_its_turns_policy_and_no_others() -> None:
    """How a user lets pi (which cannot be made to ask) run, keeping every other agent asking."""
    raw = settings(
        permission_mode="default",
        agents={
            "pi": {"command": ["pi-acp"], "permission_mode": "bypassPermissions"},
            "qwen": {"command": ["qwen", "--acp"]},
        },
    )
    pi, qwen = resolve_agent("pi", raw), resolve_agent("qwen", raw)
    assert pi.settings(raw).permission_mode == "bypassPermissions"
    assert qwen.settings(raw).permission_mode == "default"
    assert resolve_agent("claude", raw).settings(raw) is raw


@pytest.mark.parametrize(
    ("toml", "problem"),
    [
        ('agent = "-x"', "is not an agent name"),
        ('agent = "my agent"', "is not an agent name"),
        ('[agents."-x"]\ncommand = ["x"]', "is not an agent name"),
        ("[agents.x]\ncommand = []", "agents.x.command"),
        ('[agents.x]\ncommand = [""]', "must start with the agent's program"),
        ('[agents.x]\ncommand = "x acp"', "agents.x.command"),
        ('[agents.x]\ncommand = ["x"]\nflags = ["--yolo"]', "agents.x.flags"),
        ('[agents.x]\ncommand = ["x"]\nenv = {A = 1}', "agents.x.env.A"),
        ('[agents.x]\ncommand = ["x"]\npermission_mode = "yolo"', "agents.x.permission_mode"),
    ],
)
def test_bad_agent_config_is_refused_naming_the_key(
    tmp_path: Path, toml: str, problem: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(AgentdocError, match="invalid settings") as caught:
        load_settings(path=path, environ={})
    assert problem in str(caught.value)


# --- through the command line ----------------------------------------------------------------


def _document(tmp_path: Path, agent_line: str) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(f"---\nagentdoc:\n  {agent_line}\n---\n\n## User\n\nhello\n")
    return path


@pytest.mark.parametrize(
    "agent_line",
    [
        "agent: nosuch",
        "agent: [gemini, --yolo]",
        "agent: gemini --yolo",
        'agent: "-rf"',
        "agent: /bin/sh",
        "agent: 42",
        "agent: {command: sh}",
    ],
)
def test_run_refuses_a_document_that_names_no_known_agent(
    tmp_path: Path, agent_line: str, claude_on_path: FakeClaude
) -> None:
    path = _document(tmp_path, agent_line)
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["run", str(path)], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert f"known agents: {BUILTIN_NAMES}" in result.output
    assert path.read_bytes() == before
    assert claude_on_path.calls() == []  # nothing ran
    state = tmp_path / ".agentdoc"
    assert not state.exists() or {p.name for p in state.iterdir()} <= {".gitignore"}


def test_run_with_agent_claude_named_explicitly(tmp_path: Path, claude_on_path: FakeClaude) -> None:
    path = _document(tmp_path, "agent: claude")
    result = CliRunner().invoke(cli, ["run", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(claude_on_path.calls()) == 1


def test_new_with_an_agent_writes_its_name(tmp_path: Path) -> None:
    path = tmp_path / "g.md"
    result = CliRunner().invoke(
        cli, ["new", str(path), "--agent", "gemini"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert document.parse(path.read_text()).meta.agent == "gemini"


def test_new_with_the_users_own_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[agents.my-agent]\ncommand = ["/opt/agent", "acp"]\n')
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    path = tmp_path / "mine.md"
    result = CliRunner().invoke(cli, ["new", str(path), "--agent", "my-agent"])
    assert result.exit_code == 0, result.output
    assert document.parse(path.read_text()).meta.agent == "my-agent"


@pytest.mark.parametrize("agent", ["nosuch", "gemini --yolo", "-x"])
def test_new_refuses_an_unknown_agent_and_creates_nothing(tmp_path: Path, agent: str) -> None:
    path = tmp_path / "x.md"
    result = CliRunner().invoke(cli, ["new", str(path), f"--agent={agent}"])
    assert result.exit_code == 1
    assert f"known agents: {BUILTIN_NAMES}" in result.output
    assert not path.exists()


def test_the_daemon_refuses_the_document_and_keeps_serving_the_others(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    from agentdoc.daemon.service import Daemon
    from agentdoc.records import status
    from tests.support.daemon import DOC, Running, roles
    from tests.support.waiting import wait_for

    folder = tmp_path / "docs"
    folder.mkdir()
    bad, good = folder / "bad.md", folder / "good.md"
    bad.write_text(DOC.replace("agentdoc: {}", "agentdoc: {agent: gemini --yolo}"))
    good.write_text(DOC)
    daemon = Daemon(
        [folder], plain_claude.settings(settle_step=0.1, settle_max=1.0), environ=plain_claude.env
    )
    with Running(daemon):
        before = bad.read_text() + "hello\n"
        bad.write_text(before)
        wait_for(lambda: getattr(status.read_status(bad), "state", None) == "error", "an error")
        found = status.read_status(bad)
        assert found is not None and f"known agents: {BUILTIN_NAMES}" in (found.error or "")
        good.write_text(DOC + "still served?\n")
        wait_for(lambda: roles(good) == ["user", "assistant", "user"], what="the other document")
    assert bad.read_text() == before
    assert len(plain_claude.calls()) == 1
