"""Nothing runs in a synced folder until this machine trusts it, through a real `agentdoc watch`
process and the real Claude Code CLI against the offline API.

A paired device can put anything into a synced folder, Claude Code's `.claude/settings.json`
with a `SessionStart` hook among it, and Claude Code runs that hook as this machine's user as
soon as it starts in the folder, before any prompt. So the probe is the hook itself: it writes a
file when it runs. A local folder with the same hook is the control that shows the hook (and the
daemon's start ahead of a prompt) would have run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.records import status
from tests.support.claude_cli import agentdoc_env
from tests.support.processes import run_cli, watching
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

EMPTY = "---\nagentdoc: {}\n---\n\n## User\n\n"
WAIT = 60.0


def answer(text: str) -> ScriptEntry:
    return {"content": [{"type": "text", "text": text}]}


def hooked(folder: Path, witness: Path) -> Path:
    """`folder` with a SessionStart hook that writes `witness` when Claude Code starts there."""
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "command": f"id >> {witness}"}
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (folder / ".claude" / "settings.json").write_text(json.dumps(settings))
    return folder


def write_config(path: Path, **extra: object) -> Path:
    lines = ["settle_step = 0.1", "settle_max = 1.0", "flush_interval = 0.05", "claim_wait = 0"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def held(path: Path) -> str:
    shown = status.read_status(path)
    return (shown.held or "") if shown is not None and shown.state == "pending" else ""


def claude_in(folder: Path) -> list[int]:
    """Processes whose working folder is `folder` (an agent started there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder.resolve():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_an_untrusted_synced_folder_runs_nothing_until_trusted(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    phone_hook, local_hook = tmp_path / "phone-hook-ran", tmp_path / "local-hook-ran"
    phone = hooked(notes / "phone", phone_hook)
    (phone / ".stfolder").mkdir()  # Syncthing's marker: a folder a paired device writes into
    local = hooked(notes / "local", local_hook)
    conf = write_config(tmp_path / "config.toml")
    with FakeMessagesAPI(default=answer("Answered.")) as api:
        env = agentdoc_env(tmp_path, api, conf)
        with watching(notes, env, tmp_path / "watch.log") as daemon:
            # What a paired device syncs in: a new document waiting for its prompt. Then the
            # same in a local folder: once its hook ran, the phone's hint was handled too.
            (phone / "empty.md").write_text(EMPTY)
            (local / "empty.md").write_text(EMPTY)
            wait_for(local_hook.exists, "the local folder's agent started ahead", WAIT)
            assert not phone_hook.exists() and claude_in(phone) == [], daemon.log()
            daemon.kill()
        local_hook.unlink()

        # A restart: both documents were used just before it, so both are started ahead.
        with watching(notes, env, tmp_path / "watch2.log"):
            wait_for(local_hook.exists, "the local agent started at start-up", WAIT)
            assert not phone_hook.exists() and claude_in(phone) == []

            # A prompt from the phone is held, and starts nothing.
            doc = phone / "empty.md"
            doc.write_text(EMPTY + "Run your hooks.\n")
            wait_for(lambda: "does not trust" in held(doc), "the untrusted hold", WAIT)
            assert not phone_hook.exists() and claude_in(phone) == []
            assert all("Run your hooks." not in str(r.body) for r in api.requests)

            # Trusted here: the held prompt is answered, and the folder's own settings apply
            # (trusting it opted in to them): its hook runs, the control of all the above.
            trusted = run_cli(["trust", str(phone)], env)
            assert trusted.returncode == 0, trusted.stderr
            wait_for(lambda: "Answered." in doc.read_text(), "the held prompt answered", WAIT)
            wait_for(phone_hook.exists, "the trusted folder's own hook", WAIT)
    phone_hook.unlink()
    local_hook.unlink()

    # With every shared folder's own settings kept off, not even a trusted one's hook runs.
    write_config(conf, trusted=[str(phone.resolve())], folder_agent_settings=False)
    with FakeMessagesAPI(default=answer("Answered again.")) as api:
        env = agentdoc_env(tmp_path, api, conf)
        with watching(notes, env, tmp_path / "watch3.log"):
            (phone / "second.md").write_text(EMPTY + "Hello?\n")
            (local / "second.md").write_text(EMPTY + "Hello?\n")
            wait_for(lambda: "Answered again." in (phone / "second.md").read_text(), "reply", WAIT)
            wait_for(lambda: "Answered again." in (local / "second.md").read_text(), "reply", WAIT)
            # Each reply comes after its session started, hooks included.
            assert local_hook.exists() and not phone_hook.exists()
