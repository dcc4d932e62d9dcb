"""A running `agentdoc watch` takes in the user's config when it is saved, as a real process
running the real Claude Code CLI against the offline API: a raised turn budget and a new
`notify` command apply to the next prompt, an invalid edit keeps the last good settings and
says why, and a setting that needs a restart says so (log and `agentdoc status`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from tests.support.claude_cli import claude_env, require_claude
from tests.support.processes import (
    COLD_SETTINGS,
    config_text,
    held_reason,
    roles,
    run_cli,
    status_json,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

DOC = """---
agentdoc: {}
---

# Settings

## User

"""
NOTE = """\
import json, os, sys
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"event": os.environ.get("AGENTDOC_EVENT")}) + "\\n")
"""


def answer(text: str) -> ScriptEntry:
    return {"content": [{"type": "text", "text": text}]}


def write(path: Path, **settings: object) -> None:
    # Written whole and renamed, as editors do, so the daemon never reads half a file.
    temp = path.with_name(path.name + ".new")
    temp.write_text(config_text(**(COLD_SETTINGS | settings)))
    temp.replace(path)


def test_a_saved_config_takes_effect_in_the_running_daemon(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    config = tmp_path / "config.toml"
    write(config, max_turns_per_hour=1)
    notes = tmp_path / "notes.jsonl"
    script = tmp_path / "note.py"
    script.write_text(NOTE)
    doc = folder / "chat.md"
    with FakeMessagesAPI([answer("First answer."), answer("Second answer.")]) as api:
        home = tmp_path / "home"
        home.mkdir()
        env = claude_env(
            api, home, AGENTDOC_CLAUDE=str(require_claude()), AGENTDOC_CONFIG=str(config)
        )
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            doc.write_text(DOC + "One?\n")
            wait_for(lambda: "First answer." in doc.read_text(), "the first reply", 60)
            wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the turn's end", 30)

            # The budget (one turn an hour) is raised and a notify command set, in one save.
            write(config, max_turns_per_hour=5, notify=[sys.executable, str(script), str(notes)])
            wait_for(lambda: "max_turns_per_hour" in daemon.log(), "the config read again", 10)
            doc.write_text(doc.read_text() + "Two?\n")
            wait_for(lambda: "Second answer." in doc.read_text(), "the second reply", 60)
            assert "max_turns_per_hour" not in held_reason(doc)
            wait_for(lambda: notes.exists() and "done" in notes.read_text(), "the notice", 30)

            # An invalid edit: the daemon keeps running on the last good settings, and says why.
            write(config, max_turns_per_hour=-1)
            wait_for(lambda: "not applied" in daemon.log(), "the refusal in the log", 10)
            shown = run_cli(["status", str(folder)], env).stdout
            assert "max_turns_per_hour" in shown and "last good settings" in shown, shown
            assert daemon.proc.poll() is None

            # A setting a running watch cannot change is named until a restart.
            write(config, max_turns_per_hour=5, settle_step=0.2)
            wait_for(lambda: "restart" in daemon.log(), "the restart note in the log", 10)
            report = status_json(folder, env)["daemon"]
            assert "settle_step" in report["settings"] and "restart" in report["settings"]
            assert "not applied" not in report["settings"]
