"""Turns run directly (no daemon) against the real Claude CLI, for the history tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdoc.config import Settings
from agentdoc.turn.outcome import TurnOutcome
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave

DOC = """---
title: History
agentdoc: {extra}
---

# History

## User

First question?
"""


def reply(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text}]


def add_prompt(path: Path, prompt: str) -> None:
    path.write_text(path.read_text() + prompt + "\n")


def run(path: Path, settings: Settings, env: dict[str, str], **kwargs: Any) -> TurnOutcome:
    outcome = TurnRunner(path, settings, clear=own_leave, environ=env, **kwargs).run()
    assert outcome.state == "done", outcome
    return outcome


def three_turns(path: Path, settings: Settings, env: dict[str, str]) -> None:
    run(path, settings, env, mode="start")
    for prompt in ("Second question?", "Third question?"):
        add_prompt(path, prompt)
        run(path, settings, env)
