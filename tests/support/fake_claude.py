"""A replaying stand-in for the `claude` CLI: an executable that plays back a recorded
stream-json transcript (scripts/fake_claude.py) and logs how it was called."""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentdoc.config import Settings
from tests.support.paths import FAKE_CLAUDE, TRANSCRIPTS


@dataclass
class FakeClaude:
    executable: Path
    log: Path
    env: dict[str, str]

    def settings(self, **overrides: Any) -> Settings:
        # The replaying fake is a one-shot process: it reads stdin to its end.
        base: dict[str, Any] = {
            "claude": str(self.executable),
            "flush_interval": 0.05,
            "warm_sessions": 0,
        }
        base.update(overrides)
        return Settings.model_validate(base)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def fake_claude_executable(path: Path) -> Path:
    """A `claude` at `path` that runs the replaying stand-in."""
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def make_fake_claude(folder: Path, transcript: str | None = None, **env: str) -> FakeClaude:
    """A stand-in in `folder`/bin replaying `transcript` (a file of fixtures/transcripts);
    `env` are its FAKE_CLAUDE_* options (gate=..., exit=..., ...)."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = fake_claude_executable(bin_dir / "claude")
    log = folder / "claude-calls.jsonl"
    environ = {"PATH": os.environ.get("PATH", ""), "FAKE_CLAUDE_LOG": str(log)}
    if transcript is not None:
        environ["FAKE_CLAUDE_TRANSCRIPT"] = str(TRANSCRIPTS / transcript)
    environ.update({f"FAKE_CLAUDE_{k.upper()}": v for k, v in env.items()})
    return FakeClaude(exe, log, environ)


SECRET = "sk-ant-secret-value-0123456789"


def fake_cli(folder: Path, script: str) -> Path:
    exe = folder / "claude"
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def install_as_claude(fake: FakeClaude, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make `fake` the user's `claude` for what this process runs (the CLI in-process)."""
    for key, value in fake.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AGENTDOC_CLAUDE", str(fake.executable))
