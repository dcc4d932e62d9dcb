"""`ask`, presets and `search` end to end: the real Claude Code CLI against the offline API.

Every step is a separate `agentdoc` process, as a user (or a script over SSH) runs it; with a
daemon, `agentdoc watch` is a real process too.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.document import parser as document
from tests.support.claude_cli import agentdoc_env
from tests.support.processes import CLI, run_cli, watching, write_config

pytestmark = pytest.mark.e2e

DOC = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\n"


def reply(text: str) -> ScriptEntry:
    return [{"type": "text", "text": text}]


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI([reply(f"Answer number {i}.") for i in range(1, 9)]) as served:
        yield served


@pytest.fixture
def env(tmp_path: Path, api: FakeMessagesAPI) -> dict[str, str]:
    (tmp_path / "config").mkdir()
    config = write_config(
        tmp_path / "config" / "config.toml", settle_step=0.1, settle_max=1.0, flush_interval=0.05
    )
    return agentdoc_env(tmp_path, api, config, AGENTDOC_STATE_DIR=str(tmp_path / "state"))


def prompts_sent(api: FakeMessagesAPI) -> list[str]:
    """The last user text of each conversation request (not the CLI's side requests)."""
    return [r.user_texts()[-1] for r in api.requests if r.body.get("tools")]


def test_ask_without_a_daemon_runs_the_turn_and_prints_the_reply(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str]
) -> None:
    path = tmp_path / "notes" / "q.md"
    first = run_cli(["ask", "--new", str(path), "What is 2+2?"], env, timeout=120)
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Answer number 1."
    # From stdin, into the same conversation.
    second = subprocess.run(
        [*CLI, "ask", str(path), "-"],
        input="And 3+3?\n",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "Answer number 2."
    doc = document.parse(path.read_text())
    assert [t.role for t in doc.turns] == ["user", "assistant"] * 2 + ["user"]
    assert prompts_sent(api)[-2:] == ["What is 2+2?", "And 3+3?"]
    assert doc.meta.session is not None


def test_ask_hands_the_prompt_to_a_running_daemon(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str], folder: Path
) -> None:
    path = folder / "chat.md"
    path.write_text(DOC)
    with watching(folder, env, tmp_path / "watch.log") as daemon:
        result = run_cli(["ask", str(path), "Who answers?"], env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"handed to agentdoc watch (pid {daemon.pid})" in result.stderr
    assert result.stdout.strip() == "Answer number 1."
    assert prompts_sent(api) == ["Who answers?"]
    assert [t.role for t in document.parse(path.read_text()).turns][-2:] == ["assistant", "user"]


PRESET = """---
description: Reviews code
model: opus
include: [STYLE.md]
---
You are a meticulous reviewer called Quillfeather.
"""


def test_a_preset_starts_a_new_document_and_may_not_set_permissions(
    tmp_path: Path, api: FakeMessagesAPI, env: dict[str, str]
) -> None:
    presets = Path(env["AGENTDOC_CONFIG"]).parent / "presets"
    presets.mkdir()
    (presets / "review.md").write_text(PRESET)
    (presets / "yolo.md").write_text("---\npermission_mode: bypassPermissions\n---\nAnything.\n")
    listed = run_cli(["presets"], env)
    assert listed.stdout.splitlines()[0].split(None, 1) == ["review", "Reviews code"]
    assert "`permission_mode`" in listed.stdout.splitlines()[1]

    work = tmp_path / "work"
    work.mkdir()
    (work / "STYLE.md").write_text("Always name the line.\n")
    path = work / "review.md"
    made = run_cli(["new", "--preset", "review", str(path)], env)
    assert made.returncode == 0, made.stderr
    asked = run_cli(["ask", str(path), "Look at main.py"], env, timeout=120)
    assert asked.returncode == 0, asked.stderr
    [request] = [r for r in api.requests if r.body.get("tools")]
    assert "opus" in request.body["model"]
    assert "Quillfeather" in json.dumps(request.body["system"])
    assert "Always name the line." in request.user_texts()[-1]

    refused = run_cli(["new", "--preset", "yolo", str(work / "yolo.md")], env)
    assert refused.returncode == 1 and "`permission_mode` is not something a preset may set" in (
        refused.stderr
    )
    assert not (work / "yolo.md").exists()
    named = work / "named.md"
    named.write_text("---\nagentdoc: {preset: yolo}\n---\n\n## User\n\nHi\n")
    sent = len(api.requests)
    run = run_cli(["run", str(named)], env, timeout=120)
    assert run.returncode != 0 and "permission_mode" in run.stderr
    assert len(api.requests) == sent  # nothing reached the model
    assert "**Not sent:** preset 'yolo'" in named.read_text()


def test_search_finds_exchanges_in_archives_crlf_and_non_utf8_names(
    api: FakeMessagesAPI, env: dict[str, str], folder: Path
) -> None:
    crlf = folder / "crlf.md"
    crlf.write_bytes(DOC.replace("\n", "\r\n").encode())
    cafe = folder / "cafe.md"
    cafe.write_text(DOC)
    for path, prompt in [
        (crlf, "Tell me about pelicans"),
        (crlf, "And about herons"),
        (crlf, "Finally, pelicans again"),
        (cafe, "Do pelicans drink espresso?"),
    ]:
        asked = run_cli(["ask", str(path), prompt], env, timeout=120)
        assert asked.returncode == 0, asked.stderr
    # A name that is not UTF-8 (Latin-1 é), as old archives and synced folders have them.
    cafe.rename(os.fsdecode(os.fsencode(folder) + b"/caf\xe9.md"))
    archived = run_cli(["archive", "--keep", "1", str(crlf)], env)
    assert archived.returncode == 0, archived.stderr
    assert b"\r\n" in crlf.read_bytes() and b"pelicans" in (folder / "crlf.archive.md").read_bytes()

    found = subprocess.run(
        [*CLI, "search", "pelican*"], cwd=folder, env=env, capture_output=True, check=False
    )
    assert found.returncode == 0, found.stderr
    # Newest conversation first (the archiving wrote crlf.md last), latest turn first.
    assert found.stdout.splitlines() == [
        b"crlf.md#turn-3: Finally, pelicans again",
        b"crlf.archive.md#turn-1: Tell me about pelicans",
        b"caf\xe9.md#turn-1: Do pelicans drink espresso?",
    ]
    replies = subprocess.run(
        [*CLI, "search", "--replies", "--json", "answer", str(folder)],
        env=env,
        capture_output=True,
        check=False,
    )
    hits = [json.loads(line) for line in replies.stdout.splitlines()]
    assert sorted((os.path.basename(os.fsencode(h["path"])), h["turn"]) for h in hits) == [
        (b"caf\xe9.md", 1),
        (b"crlf.archive.md", 1),
        (b"crlf.archive.md", 2),
        (b"crlf.md", 3),
    ]
    line = next(h for h in hits if h["path"].endswith("crlf.md"))["line"]
    assert crlf.read_bytes().split(b"\r\n")[line - 1] == b"Answer number 3."
