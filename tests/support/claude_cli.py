"""The real Claude Code CLI for end-to-end tests: where it is, and an environment that keeps it on
the offline API."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.config import Settings
from agentdoc.turn.outcome import TurnOutcome
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave
from tests.support.paths import REPO_ROOT

_CLAUDE_MISSING = (
    "the Claude Code CLI is not installed: run `npm ci` in the repository root "
    "(or point $AGENTDOC_CLAUDE at a claude executable)"
)


def find_claude() -> Path | None:
    """$AGENTDOC_CLAUDE if set, else the npm-installed CLI of this repository, else None."""
    configured = os.environ.get("AGENTDOC_CLAUDE")
    if configured:
        return Path(configured)
    local = REPO_ROOT / "node_modules" / ".bin" / "claude"
    return local if local.exists() else None


def require_claude() -> Path:
    """The CLI to test with; a missing CLI fails the run on CI and skips the test elsewhere."""
    claude = find_claude()
    if claude is not None:
        return claude
    if os.environ.get("CI"):
        pytest.fail(_CLAUDE_MISSING)
    pytest.skip(_CLAUDE_MISSING)


def claude_env(api: FakeMessagesAPI, home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment that keeps the CLI on the fake API and out of the real $HOME.

    Built from scratch rather than copied from os.environ, so a developer's real credentials or
    base URL can never leak into a test run.
    """
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_MAX_RETRIES": "2",
        # `python -m agentdoc.cli` in a child runs this checkout, not another installed copy.
        "PYTHONPATH": str(REPO_ROOT),
    }
    if state := os.environ.get("AGENTDOC_STATE_DIR"):  # the test's own (conftest)
        env["AGENTDOC_STATE_DIR"] = state
    env.update(extra)
    return env


def agentdoc_env(
    tmp_path: Path, api: FakeMessagesAPI, config: Path, **extra: str
) -> dict[str, str]:
    """The environment of an `agentdoc` process that runs the real CLI against `api`: a scratch
    HOME under `tmp_path`, and the user config at `config`."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return claude_env(
        api, home, AGENTDOC_CLAUDE=str(require_claude()), AGENTDOC_CONFIG=str(config), **extra
    )


def one_turn(
    doc: Path,
    settings: Settings,
    home: Path,
    script: Sequence[ScriptEntry] = ([{"type": "text", "text": "Noted."}],),
    **runner: Any,
) -> tuple[TurnOutcome, FakeMessagesAPI]:
    """One turn of the real CLI on `doc` (as `agentdoc run` starts it) against a fake API
    answering `script`: the outcome, and the API with the requests it received."""
    with FakeMessagesAPI(list(script)) as api:
        environ = claude_env(api, home)
        outcome = TurnRunner(doc, settings, clear=own_leave, environ=environ, **runner).run()
    return outcome, api
