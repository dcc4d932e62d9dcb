"""Flags that only some Claude Code releases know are passed only to those releases."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.claude.process import build_argv
from agentdoc.agents.claude.version import cli_version, parse_version, thinking_display_argv
from agentdoc.config import Settings
from tests.support.clearance import leave_for


@pytest.mark.parametrize(
    ("display", "version", "argv"),
    [
        ("summarized", (2, 1, 330), ["--thinking-display=summarized"]),
        ("highlights", (2, 1, 330), ["--thinking-display=highlights"]),
        ("summarized", (2, 1, 197), ["--thinking-display=summarized"]),
        ("omitted", (2, 1, 197), ["--thinking-display=omitted"]),
        ("highlights", (2, 1, 197), []),  # 2.1.197 refuses this value: run without it
        ("summarized", (2, 1, 100), []),  # older than any release seen with the flag
        ("summarized", None, []),  # a CLI that cannot tell its version runs unchanged
        (None, (2, 1, 330), []),  # not asked for: the CLI's own default
    ],
)
def test_thinking_display_argv(
    display: str | None, version: tuple[int, ...] | None, argv: list[str]
) -> None:
    assert thinking_display_argv(display, version) == argv


@pytest.mark.parametrize(
    ("output", "version"),
    [("2.1.330 (Claude Code)\n", (2, 1, 330)), ("1.0\n", None), ("", None)],
)
def test_parse_version(output: str, version: tuple[int, ...] | None) -> None:
    assert parse_version(output) == version


def fake_claude(folder: Path, version: str) -> Path:
    script = folder / f"claude-{version}"
    script.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize(("version", "passed"), [("2.1.330", True), ("2.1.150", False)])
def test_build_argv_asks_the_cli_its_version(tmp_path: Path, version: str, passed: bool) -> None:
    claude = str(fake_claude(tmp_path, version))
    settings = Settings(claude=claude, thinking_display="summarized")
    argv = build_argv(
        claude, AgentRequest(prompt="hi", cwd=tmp_path, clearance=leave_for(tmp_path)), settings
    )
    assert ("--thinking-display=summarized" in argv) is passed
    assert cli_version(claude) == parse_version(version)


def test_no_thinking_display_no_probe(tmp_path: Path) -> None:
    claude = tmp_path / "claude"
    claude.write_text(f"#!/bin/sh\ntouch {tmp_path / 'probed'}\necho '2.1.330 (Claude Code)'\n")
    claude.chmod(0o755)
    request = AgentRequest(prompt="hi", cwd=tmp_path, clearance=leave_for(tmp_path))
    argv = build_argv(str(claude), request, Settings(claude=str(claude)))
    assert not any(a.startswith("--thinking-display") for a in argv)
    assert not (tmp_path / "probed").exists()  # the CLI runs as before: no extra process
