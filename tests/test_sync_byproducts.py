"""A sync tool's conflict copies and temporaries are never session documents in the daemon."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from agentdoc.cli import cli
from tests.conftest import FakeClaude, wait_for
from tests.test_daemon import DOC, Running, make_daemon, roles

CONFLICT = "chat.sync-conflict-20261125-123404-ASALHUV.md"


def test_a_conflict_copy_with_a_prompt_is_never_answered(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    folder = tmp_path / "docs"
    (folder / ".stversions").mkdir(parents=True)
    doc, other = folder / "chat.md", folder / "other.md"
    doc.write_text(DOC)
    other.write_text(DOC)
    fake = fake_claude("plain_text.ndjson")
    with Running(make_daemon(folder, fake)):
        doc.write_text(DOC + "first\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        # The phone's copy: the same session id, and a prompt of its own.
        copy_text = doc.read_text() + "from the phone\n"
        (folder / CONFLICT).write_text(copy_text)
        (folder / "chat (Ann's conflicted copy 2026-11-25).md").write_text(copy_text)
        (folder / ".stversions" / "chat~20261125-123404.md").write_text(DOC + "old\n")
        (folder / ".syncthing.chat.md.tmp").write_text(copy_text)
        # A prompt saved after them is answered: the daemon has seen everything before it.
        other.write_text(DOC + "second\n")
        wait_for(lambda: roles(other) == ["user", "assistant", "user"], what="the other reply")
    assert [call["stdin"] for call in fake.calls()] == ["first", "second"]
    assert (folder / CONFLICT).read_text() == copy_text
    assert not list((folder / ".agentdoc").glob("*sync-conflict*"))


def test_renaming_a_document_to_a_conflict_name_is_not_a_move(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = folder / "chat.md"
    doc.write_text(DOC)
    fake = fake_claude("plain_text.ndjson")
    with Running(make_daemon(folder, fake)):
        doc.write_text(DOC + "first\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        # What a sync tool does with a local edit that lost: renamed aside, the remote version
        # put in its place.
        answered = doc.read_text()
        doc.rename(folder / CONFLICT)
        (folder / CONFLICT).write_text(answered + "typed locally\n")
        doc.write_text(answered + "from the phone\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the phone's prompt answered")
    assert [call["stdin"] for call in fake.calls()] == ["first", "from the phone"]
    assert (folder / CONFLICT).read_text() == answered + "typed locally\n"


def test_agentdoc_run_refuses_a_conflict_copy_and_names_its_document(tmp_path: Path) -> None:
    copy = tmp_path / CONFLICT
    copy.write_text(DOC + "from the phone\n")
    result = CliRunner().invoke(cli, ["run", str(copy)])
    assert result.exit_code == 1
    assert "conflict copy of" in result.output and "chat.md" in result.output
    assert copy.read_text() == DOC + "from the phone\n"
    placeholder = tmp_path / ".chat.md.icloud"
    placeholder.write_text(DOC + "hi\n")
    result = CliRunner().invoke(cli, ["run", str(placeholder)])
    assert result.exit_code == 1 and "placeholder file" in result.output
