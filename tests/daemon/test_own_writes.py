"""The daemon knows agentdoc's own commands' writes; `.agentdoc/` stays out of git's way;
`agentdoc status FILE` says when FILE is no session document."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.conversation.undoing import undo
from agentdoc.document import digest
from agentdoc.records import ownwrites, status
from tests.support.clearance import own_leave
from tests.support.daemon import DOC, Running, make_daemon, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


def test_an_undo_is_not_taken_for_a_bulk_change_and_the_next_save_sends(
    caplog: pytest.LogCaptureFixture, folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    caplog.set_level(logging.INFO)
    with Running(make_daemon(folder, plain_claude), discovered=True):
        doc.write_text(DOC + "a question\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply")
        wait_for(lambda: _state(doc) == ("idle", None), "the turn's end")
        undo(doc, plain_claude.settings(), plain_claude.env, clear=own_leave)
        assert roles(doc) == ["user"]
        wait_for(lambda: "after `agentdoc undo`" in (_state(doc)[1] or ""), "the undo told")
        assert len(plain_claude.calls()) == 1  # taken back, not sent again on its own
        doc.write_text(doc.read_text().replace("a question", "a better question"))
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply again")
    assert len(plain_claude.calls()) == 2
    assert "changed in bulk" not in caplog.text


def test_a_save_right_after_an_undo_is_judged_against_the_undo(
    caplog: pytest.LogCaptureFixture, folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    """The person saves a new prompt before the daemon has taken the undo in (both land within
    one settle window): the save is judged against undo's version, so it is a typed prompt,
    sent; not turns gone, held, nor a stale copy that gets the reply merged back."""
    caplog.set_level(logging.INFO)
    daemon = make_daemon(folder, plain_claude)
    with Running(daemon, discovered=True):
        doc.write_text(DOC + "a question\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply")
        wait_for(lambda: _state(doc) == ("idle", None), "the turn's end")
        wait_for(lambda: not daemon._deadlines._heap, "the look after the turn")
        undo(doc, plain_claude.settings(), plain_claude.env, clear=own_leave)
        # No wait for the daemon to see the undo: the next save lands at once.
        doc.write_text(doc.read_text().replace("a question", "a better question"))
        wait_for(lambda: len(plain_claude.calls()) == 2, "the new prompt sent")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply again")
        wait_for(lambda: _state(doc) == ("idle", None), "the second turn's end")
    assert [call["stdin"] for call in plain_claude.calls()] == ["a question", "a better question"]
    assert "a better question" in doc.read_text() and "a question\n" not in doc.read_text()
    assert "changed in bulk" not in caplog.text
    assert "older than the reply" not in caplog.text


def test_the_record_of_an_own_write_names_the_version_it_replaced(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    before, after = DOC + "a question\n", DOC
    ownwrites.note_own_write(doc, after.encode(), "undo", before.encode())
    assert ownwrites.own_write(doc, digest(after.encode())) == "undo"
    assert ownwrites.own_base(doc, digest(before.encode())) == after
    assert ownwrites.own_base(doc, digest(after.encode())) is None
    ownwrites.note_own_write(doc, after.encode(), "undo")  # no replaced version: no base
    assert ownwrites.own_base(doc, digest(before.encode())) is None


def _state(doc: Path) -> tuple[str | None, str | None]:
    found = status.read_status(doc)
    return (found.state, found.held) if found is not None else (None, None)


def test_the_state_folder_ignores_itself(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    doc = tmp_path / "chat.md"
    doc.write_text(DOC)
    status.write_status(doc, status.Status(document=doc.name, state="idle", updated=""))
    assert (tmp_path / ".agentdoc" / ".gitignore").read_text().splitlines()[-1] == "*"
    listed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert listed.splitlines() == ["?? chat.md"]


def test_status_of_a_file_that_is_no_session_document(tmp_path: Path) -> None:
    note, fresh = tmp_path / "note.md", tmp_path / "fresh.md"
    note.write_text("# Just a note\n")
    fresh.write_text(DOC)
    result = CliRunner().invoke(cli, ["status", str(note)])
    assert result.exit_code == 1
    assert "note.md is not a session document" in result.output
    result = CliRunner().invoke(cli, ["status", str(fresh)])
    assert result.exit_code == 0 and "fresh.md: idle (no turn has run in it yet)" in result.output


def test_a_checkout_that_drops_turns_is_told_to_the_model_on_the_next_turn(
    tmp_path: Path,
) -> None:
    """The history snapshot lives in the ignored state folder, so a checkout that brings back
    an older document cannot roll it back too: the next turn tells the model what went."""
    from agentdoc.config import Settings
    from agentdoc.document import parse
    from agentdoc.records import history
    from agentdoc.turn.session import prepare_turn
    from tests.support.conversations import SESSION, numbered_conversation

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    doc = tmp_path / "chat.md"
    doc.write_text(numbered_conversation(3))
    history.record_turn(doc, "", 3, SESSION)
    snapshot = history.snapshot_path(doc)
    ignored = subprocess.run(["git", "check-ignore", "-q", str(snapshot)], cwd=tmp_path)
    assert ignored.returncode == 0, "the snapshot must be out of git's reach"
    # What a checkout of an older commit leaves: the third exchange is gone from the file.
    doc.write_text(numbered_conversation(2, pending="What now?"))
    plan = prepare_turn(doc, parse(doc.read_text()), "What now?", "run", Settings(), environ={})
    assert plan.request.resume == SESSION
    assert "-Assistant: Answer 3." in plan.request.prompt  # the removed exchange, told as an edit
