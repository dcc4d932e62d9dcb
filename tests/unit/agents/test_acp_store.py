"""A Gemini session's files are renamed out of the way of its `session/load`, which would write
a new recording into a file of the same name (the minute it was created, the short id) and
erase the conversation before reading it. Only files that hold the session itself move, and
nothing is ever overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from agentdoc.agents.acp.store import GEMINI_STORE, keep_loadable

SID = "256ab917-cdf3-4a98-b828-bcbb2b053c49"
OTHER = "256ab917-0000-4000-8000-000000000000"  # the same short id, another session


def chats(home: Path, project: str = "work") -> Path:
    folder = home / ".gemini" / "tmp" / project / "chats"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def session_file(folder: Path, name: str, session_id: str = SID) -> Path:
    path = folder / name
    header = {"sessionId": session_id, "projectHash": "h", "kind": "main"}
    path.write_text(json.dumps(header) + "\n" + json.dumps({"type": "user"}) + "\n")
    return path


def test_the_sessions_minute_named_file_gets_a_name_no_recording_takes(tmp_path: Path) -> None:
    folder = chats(tmp_path)
    stored = session_file(folder, "session-2026-11-25T17-26-256ab917.jsonl")
    content = stored.read_bytes()
    moved = keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path)}, SID)
    renamed = folder / "session-2026-11-25T17-26-00-256ab917.jsonl"
    assert moved == [renamed]
    assert not stored.exists()
    assert renamed.read_bytes() == content  # the file moved, untouched
    # A second load finds nothing left to move: the renamed file never matches again.
    assert keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path)}, SID) == []


def test_home_falls_back_to_HOME_and_every_project_is_looked_in(tmp_path: Path) -> None:
    stored = session_file(chats(tmp_path, "other"), "session-2026-11-25T17-26-256ab917.jsonl")
    moved = keep_loadable(GEMINI_STORE, {"HOME": str(tmp_path)}, SID)
    assert [p.name for p in moved] == ["session-2026-11-25T17-26-00-256ab917.jsonl"]
    assert not stored.exists()


def test_files_of_other_sessions_or_shapes_are_left_alone(tmp_path: Path) -> None:
    folder = chats(tmp_path)
    kept = [
        session_file(folder, "session-2026-11-25T17-26-256ab917.jsonl", OTHER),
        session_file(folder, "session-2026-11-25T17-27-256ab917.json"),  # the old format
        session_file(folder, "session-2026-11-25T17-28-07-256ab917.jsonl"),  # already moved
        session_file(folder, "notes-2026-11-25T17-26-256ab917.jsonl"),
    ]
    broken = folder / "session-2026-11-25T17-29-256ab917.jsonl"
    broken.write_text("not json\n")
    assert keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path)}, SID) == []
    assert all(path.exists() for path in [*kept, broken])


def test_an_existing_file_is_never_overwritten(tmp_path: Path) -> None:
    folder = chats(tmp_path)
    taken = session_file(folder, "session-2026-11-25T17-26-00-256ab917.jsonl")
    taken.write_text(taken.read_text() + "earlier\n")
    session_file(folder, "session-2026-11-25T17-26-256ab917.jsonl")
    moved = keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path)}, SID)
    assert [p.name for p in moved] == ["session-2026-11-25T17-26-01-256ab917.jsonl"]
    assert taken.read_text().endswith("earlier\n")


def test_no_store_no_home_or_no_folder_moves_nothing(tmp_path: Path) -> None:
    session_file(chats(tmp_path), "session-2026-11-25T17-26-256ab917.jsonl")
    assert keep_loadable(None, {"GEMINI_CLI_HOME": str(tmp_path)}, SID) == []
    assert keep_loadable(GEMINI_STORE, {}, SID) == []
    assert keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path / "none")}, SID) == []
    assert keep_loadable(GEMINI_STORE, {"GEMINI_CLI_HOME": str(tmp_path)}, "short") == []
