"""`agentdoc watch` as a process driving the real Claude CLI against the fake Messages API: its
environment, the served folder, the warm CLIs it keeps, and asking in a document."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from tests.support.claude_cli import agentdoc_env
from tests.support.processes import (
    WatchProcess,
    command_lines,
    processes_with_env,
    state_of,
    watching,
    write_quick_config,
)
from tests.support.waiting import wait_for

DOC = """---
agentdoc: {}
---

## User

"""


WORDS = " ".join(f"word{i}" for i in range(60))


def warm_env(tmp_path: Path, api: FakeMessagesAPI, **settings: Any) -> dict[str, str]:
    config = write_quick_config(
        tmp_path / "config.toml",
        **settings,
    )
    return agentdoc_env(tmp_path, api, config, CLAUDE_CODE_MAX_RETRIES="1")


def warm_clis(env: dict[str, str]) -> list[int]:
    """The long-lived CLIs of this test, alive now."""
    lines = command_lines(processes_with_env("HOME", env["HOME"]))
    return sorted(pid for pid, line in lines.items() if b"--input-format=stream-json" in line)


@contextlib.contextmanager
def served(
    tmp_path: Path, folder: Path, script: list[ScriptEntry], **settings: Any
) -> Iterator[tuple[FakeMessagesAPI, dict[str, str], WatchProcess]]:
    with FakeMessagesAPI(script) as api:
        env = warm_env(tmp_path, api, **settings)
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            yield api, env, daemon


def answer(text: str) -> ScriptEntry:
    return [{"type": "text", "text": text}]


def ask(doc: Path, prompt: str, reply: str) -> None:
    """Type a prompt under the last heading, save, and wait for `reply` and an idle status."""
    text = doc.read_text()
    assert text.endswith("## User\n\n"), text[-200:]
    doc.write_text(text + prompt + "\n")
    wait_for(lambda: reply in doc.read_text() and state_of(doc) == "idle", what=reply)


def paused(words_before_pause: int) -> ScriptEntry:
    return {
        "content": [{"type": "text", "text": WORDS}],
        "pause_after_deltas": words_before_pause,
    }


# A document with a title of its own: the daemon's tests start from it already in the folder.
TITLED_DOC = """---
title: Daemon
agentdoc: {}
---

# Daemon

## User

"""
