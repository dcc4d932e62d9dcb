"""Copies of a conversation that sync tools and phones make, met by a real `agentdoc watch`
process running the real Claude Code CLI against the offline API: one session lives in one
document.

A two-way sync tool may resolve a conflict by renaming both sides, so no document is left under
its name (rclone `bisync`: `chat.md.conflict1` and `chat.md.conflict2`, before 1.66
`chat.md..path1` and `chat.md..path2`). rclone itself is not run: the test makes its renames
exactly on disk, as bisync does on this machine's side (its own version renamed to the first
name, the other side's written under the second), in the middle of a reply. Other tools name a
copy in ways no table lists (`chat 2.md`): it carries the document's session id, which is what
makes it a copy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.document import parser as document
from agentdoc.localstate import state_folder
from agentdoc.records import open_regions
from tests.support.claude_cli import agentdoc_env, claude_env, require_claude
from tests.support.processes import state_of, watching
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

DOC = """---
agentdoc: {}
---

# Synced by rclone

## User

"""
WORDS = " ".join(f"word{i}" for i in range(60))


def config(path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    settings: dict[str, object] = {
        "settle_step": 0.1,
        "settle_max": 1.0,
        "flush_interval": 0.05,
        "sync_flush_interval": 0.1,
        "warm_sessions": 0,
        "claim_wait": 0,
        "synced": [str(folder)],  # rclone leaves no marker: the config says so
        "trusted": [str(folder)],
    }
    path.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items()))
    # The test reads the daemon's statuses as this machine: the folder is synced by the config
    # alone, so the test must go by the same config to find them (out of the synced tree).
    monkeypatch.setenv("AGENTDOC_CONFIG", str(path))
    return path


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [("chat.md.conflict1", "chat.md.conflict2"), ("chat.md..path1", "chat.md..path2")],
    ids=["bisync", "bisync-before-1.66"],
)
def test_both_sides_renamed_are_rebuilt_into_the_document_and_answered_once(
    tmp_path: Path, ours: str, theirs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    doc = folder / "chat.md"
    script: list[ScriptEntry] = [
        {"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 20},
        {"content": [{"type": "text", "text": "Answered for the phone."}]},
    ]
    with FakeMessagesAPI(script) as api:
        home = tmp_path / "home"
        home.mkdir()
        env = claude_env(
            api,
            home,
            AGENTDOC_CLAUDE=str(require_claude()),
            AGENTDOC_CONFIG=str(config(tmp_path / "config.toml", folder, monkeypatch)),
        )
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            doc.write_text(DOC + "First question?\n")
            api.wait_paused()
            wait_for(lambda: "word19" in doc.read_text(), "the partial reply in the file")
            partial = doc.read_text()
            # The phone had this version and typed a prompt below it; both changed the file
            # since the last sync, so bisync keeps both, under new names, and no chat.md.
            (folder / ours).write_bytes(doc.read_bytes())
            doc.rename(folder / ours)
            (folder / theirs).write_text(partial + "\n## User\n\nFrom the phone?\n")
            api.release()

            wait_for(lambda: len(api.requests) == 2, "the phone's prompt sent", 60)
            wait_for(
                lambda: doc.exists() and "Answered for the phone." in doc.read_text(),
                "the reply in the rebuilt document",
                60,
            )
            wait_for(lambda: state_of(doc) == "idle", "the turn's end", 30)
            left = sorted(p.name for p in folder.iterdir() if p.name.startswith("chat.md"))
            assert left == ["chat.md"], (left, daemon.log())
            text = doc.read_text()
            # (The interrupted turn's session was never saved: the prompt comes with the
            # conversation so far, as after any interrupted reply.)
            assert api.requests[1].user_texts()[-1].rstrip().endswith("From the phone?")
            assert len(api.requests) == 2  # answered once

    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    assert parsed.turns[0].content.strip() == "First question?"
    assert "word19" in parsed.turns[1].content  # the reply as far as it came
    assert parsed.turns[2].content.strip() == "From the phone?"
    assert text.count("From the phone?") == 1
    assert open_regions(text) == []  # no streaming markers left behind
    kept = sorted(p.name for p in (state_folder(folder) / "conflicts").iterdir())
    assert kept == sorted([ours, theirs])


def serve(
    tmp_path: Path, folder: Path, api: FakeMessagesAPI, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    return agentdoc_env(tmp_path, api, config(tmp_path / "config.toml", folder, monkeypatch))


def test_a_copy_under_any_name_is_merged_back_never_run_as_a_second_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    doc = folder / "chat.md"
    copy = folder / "chat 2.md"  # a name no sync tool's table has
    script: list[ScriptEntry] = [
        {"content": [{"type": "text", "text": "The first answer."}]},
        {"content": [{"type": "text", "text": "Answered for the phone."}]},
    ]
    with FakeMessagesAPI(script) as api:
        env = serve(tmp_path, folder, api, monkeypatch)
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            doc.write_text(DOC + "First question?\n")
            wait_for(lambda: state_of(doc) == "idle" and len(api.requests) == 1, "the reply", 60)
            session = document.parse(doc.read_text()).meta.session
            assert session
            # The phone's app saved its edit as a new file beside the document.
            copy.write_text(doc.read_text() + "From the phone?\n")
            wait_for(lambda: len(api.requests) == 2, "the phone's prompt sent", 60)
            wait_for(
                lambda: "Answered for the phone." in doc.read_text() and state_of(doc) == "idle",
                "the reply in the document",
                60,
            )
            assert not copy.exists(), daemon.log()
            assert len(api.requests) == 2
            assert api.requests[1].user_texts()[-1] == "From the phone?"

    parsed = document.parse(doc.read_text())
    assert parsed.meta.session == session
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    assert parsed.turns[2].content.strip() == "From the phone?"
    assert (state_folder(folder) / "conflicts" / copy.name).is_file()
