"""A sync tool's conflict copies and temporaries are never session documents in the daemon."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.document import parser as document
from tests.support.daemon import (
    DOC,
    Running,
    first_answered,
    first_answered_then_stopped,
    make_daemon,
    roles,
    save_and_wait_reply,
    state_of,
)
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

CONFLICT = "chat.sync-conflict-20261125-123404-ASALHUV.md"


def test_sync_byproducts_are_never_answered_as_documents(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    folder = tmp_path / "docs"
    (folder / ".stversions").mkdir(parents=True)
    doc = folder / "chat.md"
    doc.write_text(DOC)
    with Running(make_daemon(folder, plain_claude)):
        # Copies of a file that is no session document of ours: left alone, never run.
        stray = folder / "notes.sync-conflict-20261125-123404-ASALHUV.md"
        stray.write_text(DOC + "a prompt in a stray copy\n")
        (folder / "notes (Ann's conflicted copy 2026-11-25).md").write_text(DOC + "another\n")
        (folder / ".stversions" / "chat~20261125-123404.md").write_text(DOC + "old\n")
        (folder / ".syncthing.chat.md.tmp").write_text(DOC + "in transfer\n")
        (folder / ".chat.md.icloud").write_text(DOC + "placeholder\n")
        # A prompt saved after them is answered: the daemon has seen everything before it.
        doc.write_text(DOC + "first\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first"]
    assert stray.read_text() == DOC + "a prompt in a stray copy\n"


@pytest.mark.parametrize("poll", [False, True], ids=["events", "polling"])
def test_a_conflict_copy_is_merged_back_and_its_prompt_answered_once(
    poll: bool, folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, plain_claude, poll=poll)):
        save_and_wait_reply(doc, DOC + "first\n")
        # The phone's version lost to ours: the sync tool kept it as a copy, same session id.
        (folder / CONFLICT).write_text(doc.read_text() + "from the phone\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the phone's prompt answered")
        wait_for(lambda: not (folder / CONFLICT).exists(), what="the copy moved away")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "from the phone"]
    kept = folder / ".agentdoc" / "conflicts" / CONFLICT
    assert kept.is_file()
    listed = CliRunner().invoke(cli, ["status", str(folder)])
    assert f"merged conflict copy, kept: {kept}" in listed.output
    assert document.parse(doc.read_text()).turns[2].content.strip() == "from the phone"


def test_renaming_a_document_to_a_conflict_name_is_not_a_move(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    # What a sync tool does with a local version that lost: renamed aside, the remote version
    # put in its place.
    with first_answered(doc, plain_claude) as answered:
        doc.rename(folder / CONFLICT)
        doc.write_text(answered + "from the phone\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the phone's prompt answered")
        wait_for(lambda: not (folder / CONFLICT).exists(), what="the copy merged and moved")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "from the phone"]


def test_agentdoc_run_refuses_a_conflict_copy_and_names_its_document(tmp_path: Path) -> None:
    copy = tmp_path / CONFLICT
    copy.write_text(DOC + "from the phone\n")
    result = CliRunner().invoke(cli, ["run", str(copy)])
    assert result.exit_code == 1
    assert "conflict copy of" in result.output and "chat.md" in result.output
    assert copy.read_text() == DOC + "from the phone\n"
    for command in (["undo"], ["archive"], ["fork"]):
        extra = [str(tmp_path / "forked.md")] if command == ["fork"] else []
        refused = CliRunner().invoke(cli, [*command, str(copy), *extra])
        assert refused.exit_code == 1 and "conflict copy of" in refused.output, command
    assert copy.read_text() == DOC + "from the phone\n"
    assert not (tmp_path / "forked.md").exists()
    placeholder = tmp_path / ".chat.md.icloud"
    placeholder.write_text(DOC + "hi\n")
    result = CliRunner().invoke(cli, ["run", str(placeholder)])
    assert result.exit_code == 1 and "placeholder file" in result.output


def test_a_copy_of_another_conversation_stays_with_a_notice_in_the_document(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with first_answered(doc, plain_claude) as answered:
        session = document.parse(answered).meta.session
        assert session
        other = DOC.replace(
            "agentdoc: {}", "agentdoc:\n  session: 0b9e7a55-0000-4000-8000-000000000001"
        )
        (folder / CONFLICT).write_text(other + "another conversation's prompt\n")
        wait_for(lambda: "holds another conversation" in doc.read_text(), what="the notice")
    assert (folder / CONFLICT).exists()
    assert [call["stdin"] for call in plain_claude.calls()] == ["first"]
    parsed = document.parse(doc.read_text())
    assert parsed.meta.session == session
    assert parsed.pending_prompt() is None  # the notice is above the first turn, no prompt


def test_a_document_carrying_another_s_session_is_a_copy_merged_back_not_run(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    """Whatever its name: the session id is what makes it a copy."""
    with first_answered(doc, plain_claude) as answered:
        assert document.parse(answered).meta.session
        copy = folder / "chat - phone edit.md"
        copy.write_text(answered + "from the phone\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the phone's prompt answered")
        wait_for(lambda: not copy.exists(), what="the copy moved away")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "from the phone"]
    assert (folder / ".agentdoc" / "conflicts" / copy.name).is_file()
    assert document.parse(doc.read_text()).turns[2].content.strip() == "from the phone"


def test_both_sides_renamed_while_no_daemon_watched_are_rebuilt_at_start_up(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    """rclone bisync's renames (made here on disk as bisync makes them) of a document agentdoc
    answered before it stopped: the next start rebuilds it and answers the copies' prompt."""
    first_answered_then_stopped(doc, plain_claude)
    answered = doc.read_text()
    doc.rename(folder / "chat.md.conflict1")
    (folder / "chat.md.conflict2").write_text(answered + "from the phone\n")
    with Running(make_daemon(folder, plain_claude)):
        wait_for(lambda: doc.exists() and len(roles(doc)) == 5, what="the phone's prompt answered")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "from the phone"]
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("chat")) == ["chat.md"]


def test_a_copy_found_waiting_at_start_up_is_merged_when_saved_again(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    """The copy has a status of its own (its prompt was found waiting), which must not make
    the document it was merged into look like the copy."""
    first_answered_then_stopped(doc, plain_claude)
    copy = folder / "chat (phone).md"
    copy.write_text(doc.read_text() + "from the phone\n")
    with Running(make_daemon(folder, plain_claude), discovered=True):
        wait_for(lambda: state_of(copy) is not None, what="the copy's waiting prompt told")
        copy.write_text(copy.read_text())  # saved again: its prompt is due
        wait_for(lambda: len(roles(doc)) == 5, what="the phone's prompt answered")
        wait_for(lambda: not copy.exists(), what="the copy moved away")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "from the phone"]
