"""Fixtures of the command-line tests: a machine where every `agentdoc doctor` check passes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdoc.agents.claude import checks as claude_checks
from tests.support.acp import tiny_agent
from tests.support.fake_claude import SECRET, fake_cli


@pytest.fixture
def healthy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine where every check passes: a CLI of a tested version, a login file, and the
    built-in ACP agents on PATH (tiny stand-ins that answer the handshake)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tested = ".".join(map(str, claude_checks.TESTED_MAX))
    exe = fake_cli(bin_dir, f'echo "{tested} (Claude Code)"')
    for program in ("gemini", "codex-acp", "opencode"):
        tiny_agent(bin_dir, program)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text(json.dumps({"token": SECRET}))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENTDOC_CLAUDE", str(exe))
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return exe
