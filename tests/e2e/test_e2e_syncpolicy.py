"""Who answers a synced folder, through real Syncthing instances on loopback and real
`agentdoc watch` processes running the real Claude Code CLI against the offline API: trust on
this machine, the turn budget, notify, and one answer when two desktops watch one folder."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.records import status
from tests.support.claude_cli import claude_env, require_claude
from tests.support.processes import COLD_SETTINGS, as_machine, config_text, roles, run_cli, watching
from tests.support.syncthing import (
    Syncthing,
    needs_syncthing,
    share,
    syncthing_cluster,
    syncthing_pair,
    wait_in_sync,
)
from tests.support.waiting import wait_for

__all__ = ["syncthing_pair"]  # the fixture, used by name below

pytestmark = [pytest.mark.e2e, needs_syncthing]

DOC = """---
agentdoc: {}
---

# From the phone

## User

"""
NOTE = """\
import json, os, sys
keys = ("AGENTDOC_EVENT", "AGENTDOC_DOCUMENT", "AGENTDOC_TURN", "AGENTDOC_SUMMARY")
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({k: os.environ.get(k) for k in keys}) + "\\n")
"""
SYNC_WAIT = 60.0  # seconds for a save to travel through Syncthing and be answered


def answer(text: str) -> ScriptEntry:
    return {"content": [{"type": "text", "text": text}]}


def config(path: Path, trusted: Sequence[Path] = (), **settings: object) -> Path:
    trust = [str(p) for p in trusted]
    path.write_text(config_text(**(COLD_SETTINGS | settings | {"trusted": trust})))
    return path


def env_for(api: FakeMessagesAPI, base: Path, config_file: Path) -> dict[str, str]:
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    return claude_env(
        api,
        home,
        AGENTDOC_CLAUDE=str(require_claude()),
        AGENTDOC_CONFIG=str(config_file),
        AGENTDOC_STATE_DIR=str(base / "state"),  # the machine's own id lives here
    )


def held(path: Path, env: Mapping[str, str]) -> str:
    """Why the machine of `env` holds the prompt of `path` (its status is its own)."""
    with as_machine(env):
        shown = status.read_status(path)
    return (shown.held or "") if shown is not None and shown.state == "pending" else ""


def notes(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def text_of(path: Path) -> str:
    """The file's text; "" in the moment Syncthing replaces it with a version from a peer."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def conflict_copies(*folders: Path) -> list[Path]:
    return [p for f in folders for p in f.rglob("*") if ".sync-conflict-" in p.name]


def test_untrusted_holds_trust_releases_the_budget_holds_and_notify_tells_each_once(
    tmp_path: Path, syncthing_pair: tuple[Syncthing, Syncthing, Path, Path]
) -> None:
    phone, server, phone_dir, server_dir = syncthing_pair
    log = tmp_path / "notes.jsonl"
    script = tmp_path / "note.py"
    script.write_text(NOTE)
    conf = config(
        tmp_path / "server.toml",
        max_turns_per_hour=1,
        claim_wait=0,
        notify=[sys.executable, str(script), str(log)],
    )
    with FakeMessagesAPI([answer("Answered on the server.")]) as api:
        env = env_for(api, tmp_path / "server", conf)
        assert run_cli(["init-sync", str(server_dir)], env).returncode == 0
        wait_in_sync([phone, server])
        with watching(server_dir, env, tmp_path / "watch.log"):
            (phone_dir / "chat.md").write_text(DOC + "Hello from the phone?\n")
            doc = server_dir / "chat.md"
            wait_for(lambda: "does not trust" in held(doc, env), "the untrusted hold", SYNC_WAIT)
            assert f"agentdoc trust {server_dir}" in held(doc, env) and api.requests == []
            shown = run_cli(["status", str(doc)], env).stdout
            assert "chat.md: pending" in shown and f"agentdoc trust {server_dir}" in shown

            trusted = run_cli(["trust", str(server_dir)], env)
            assert trusted.returncode == 0, trusted.stderr
            wait_for(
                lambda: "Answered on the server." in text_of(phone_dir / "chat.md"),
                "the reply on the phone",
                SYNC_WAIT,
            )
            wait_in_sync([phone, server])
            (phone_dir / "chat.md").write_text((phone_dir / "chat.md").read_text() + "One more?\n")
            wait_for(lambda: "max_turns_per_hour" in held(doc, env), "the budget's hold", SYNC_WAIT)
            wait_for(lambda: len(notes(log)) == 3, "three notifications", 30)
        wait_in_sync([phone, server])
    assert len(api.requests) == 1
    assert [n["AGENTDOC_EVENT"] for n in notes(log)] == ["held", "done", "held"]
    assert "does not trust" in notes(log)[0]["AGENTDOC_SUMMARY"]
    assert notes(log)[1]["AGENTDOC_SUMMARY"] == "Answered on the server."
    assert notes(log)[1]["AGENTDOC_TURN"] == "1"
    assert roles(phone_dir / "chat.md") == ["user", "assistant", "user"]
    assert not (phone_dir / ".agentdoc").exists()  # this machine's state stayed here
    assert conflict_copies(phone_dir, server_dir) == []


def test_a_phone_and_two_desktops_answer_each_prompt_once(tmp_path: Path) -> None:
    with syncthing_cluster(tmp_path / "syncthing", "phone", "desk1", "desk2") as instances:
        dirs = [tmp_path / name / "notes" for name in ("phone", "desk1", "desk2")]
        share(dirs, instances)
        phone_dir, desks = dirs[0], dirs[1:]
        script = [answer(f"Answer {n}.") for n in (1, 2, 3)]
        with FakeMessagesAPI(script) as api:
            envs = [
                env_for(
                    api,
                    tmp_path / f"desk{i}",
                    config(tmp_path / f"desk{i}.toml", [desk], claim_wait=15),
                )
                for i, desk in enumerate(desks, 1)
            ]
            for desk, env in zip(desks, envs, strict=True):
                assert run_cli(["init-sync", str(desk)], env).returncode == 0
            wait_in_sync(instances)
            chat = phone_dir / "chat.md"

            def ask(prompt: str, reply: str) -> None:
                # In step everywhere after the last answer, so the file is there to extend.
                chat.write_text((chat.read_text() if chat.exists() else DOC) + prompt + "\n")
                wait_for(lambda: reply in text_of(chat), f"“{reply}” on the phone", SYNC_WAIT)
                wait_in_sync(instances)

            with (
                watching(desks[0], envs[0], tmp_path / "desk1.log"),
                watching(desks[1], envs[1], tmp_path / "desk2.log"),
            ):
                ask("Who answers?", "Answer 1.")
                ask("And again?", "Answer 2.")
                held_by = {
                    d: partial(held, d / "chat.md", e) for d, e in zip(desks, envs, strict=True)
                }
                waiting = [d for d in desks if "answers this document" in held_by[d]()]
                assert len(waiting) == 1, [held_by[d]() for d in desks]
                # The desktop that held the prompts takes the conversation over.
                [other] = waiting
                adopted = run_cli(["adopt", str(other / "chat.md")], envs[desks.index(other)])
                assert adopted.returncode == 0, adopted.stderr
                wait_in_sync(instances)
                ask("Now you?", "Answer 3.")
                wait_for(
                    lambda: all(
                        ("answers this document" in held_by[d]()) == (d is not other) for d in desks
                    ),
                    "the first desktop to hold now",
                    SYNC_WAIT,
                )
        said = [r.user_texts()[-1] for r in api.requests]
        assert said[:2] == ["Who answers?", "And again?"] and len(said) == 3
        # The adopting machine has no session of its own: it sends the conversation with it.
        assert said[2].endswith("Now you?") and "Assistant: Answer 2." in said[2]
        assert roles(chat) == ["user", "assistant"] * 3 + ["user"]
        assert conflict_copies(*dirs) == []
        claims = sorted(p.name for p in (phone_dir / ".agentdoc-claims").iterdir())
        assert len(claims) == 2  # the winner's first claim and the adopter's higher one
