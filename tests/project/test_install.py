"""What each of the two set-up commands installs: `make demo` only what the demo runs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

CLAUDE = "@anthropic-ai/claude-code"


def planned(target: str, scratch: Path) -> str:
    """The commands `make TARGET` would run on a fresh clone (nothing installed yet)."""
    if shutil.which("make") is None:
        pytest.skip("no make")
    for name in ("Makefile", "pyproject.toml", "package.json", "package-lock.json"):
        shutil.copy(REPO_ROOT / name, scratch / name)
    done = subprocess.run(
        ["make", "-n", target], cwd=scratch, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_demo_installs_agentdoc_and_claude_code_only(tmp_path: Path) -> None:
    commands = planned("demo", tmp_path)
    assert "pip install --quiet -e .\n" in commands
    assert ".[dev]" not in commands  # no test, lint or type-check tools
    assert "npm ci --omit=dev" in commands
    assert "npm ci --no-audit" not in commands
    for other in ("gemini", "opencode", "codex", ".claude-versions", "mkdocs"):
        assert other not in commands


def test_the_suite_installs_everything(tmp_path: Path) -> None:
    commands = planned("test", tmp_path)
    assert "pip install --quiet -e '.[dev]'" in commands
    assert "npm ci --no-audit" in commands and "--omit=dev" not in commands
    assert "mkdocs build --strict" in commands


def test_the_quick_loop_installs_no_agent(tmp_path: Path) -> None:
    """`make check` (lint and the unit tier) runs no agent: installing 260 npm packages took
    most of its minute on a fresh clone."""
    commands = planned("check", tmp_path)
    assert "pip install --quiet -e '.[dev]'" in commands
    assert "npm " not in commands


def test_the_lock_gives_the_demo_claude_code_alone() -> None:
    package = json.loads((REPO_ROOT / "package.json").read_text())
    assert set(package["dependencies"]) == {CLAUDE}
    assert CLAUDE not in package["devDependencies"]
    lock = json.loads((REPO_ROOT / "package-lock.json").read_text())
    root = lock["packages"][""]
    assert root["dependencies"] == package["dependencies"]
    assert root["devDependencies"] == package["devDependencies"]
    # What `npm ci --omit=dev` installs: every locked package not marked as only for development.
    kept = {path for path, entry in lock["packages"].items() if path and not entry.get("dev")}
    assert f"node_modules/{CLAUDE}" in kept
    assert all(path.startswith(f"node_modules/{CLAUDE}") for path in kept), sorted(kept)
