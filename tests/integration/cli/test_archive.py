"""`agentdoc archive`: older exchanges move byte for byte; numbering, history and sessions hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli.commands import cli
from agentdoc.config import Settings
from agentdoc.conversation import archive_document as archive
from agentdoc.conversation import fork
from agentdoc.document import archive_path, is_session_document, move, parse
from agentdoc.document.splice import START
from agentdoc.errors import AgentdocError
from agentdoc.records import history
from agentdoc.turn.session import prepare_turn
from tests.support.clearance import own_leave
from tests.support.conversations import SESSION, numbered_conversation


def full_transcript(path: Path) -> str:
    doc = parse(path.read_text())
    return history.joined(history.archived_transcript(path, doc), doc.transcript())


@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_older_exchanges_move_byte_for_byte(tmp_path: Path, nl: str) -> None:
    doc = tmp_path / "long.md"
    original = numbered_conversation(5, nl, pending="Next?")
    doc.write_bytes(original.encode())
    before = parse(original)
    moved = archive(doc, keep=2)
    assert (moved.moved, moved.archived) == (3, 3)
    text = doc.read_bytes().decode()
    stored = archive_path(doc).read_bytes().decode()
    first = original.index("## User")
    cut = original.index(f"## User{nl}{nl}Question 4?")
    body = stored[stored.index("## User") :]
    assert body == original[first:cut]  # byte for byte, comments and footers included
    assert text.endswith(original[cut:])  # the last two exchanges and the pending prompt
    assert "[long.archive.md](long.archive.md)" in text
    after = parse(text)
    assert after.meta.archived == 3
    assert after.turn_count() == before.turn_count() == 5
    assert after.pending_prompt() == "Next?"
    assert not is_session_document(stored)
    assert full_transcript(doc) == before.transcript()


def test_archiving_again_appends_and_keeps_one_link(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(6))
    before = parse(doc.read_text()).transcript()
    archive(doc, keep=4)
    archive(doc, keep=1)
    text = doc.read_text()
    assert text.count("are archived in") == 1
    assert "Exchanges 1–5 are archived in" in text
    stored = archive_path(doc).read_text()
    assert [n for n in range(1, 7) if f"Question {n}?" in stored] == [1, 2, 3, 4, 5]
    assert parse(text).turn_count() == 6
    assert full_transcript(doc) == before


def test_a_run_that_died_before_the_document_was_written_is_repaired(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(5))
    archive(doc, keep=3)
    stored = archive_path(doc)
    # As if a second run wrote the archive (exchanges 3 and 4) and died before the document.
    stored.write_text(
        stored.read_text() + "## User\n\nQuestion 3?\n\n## Assistant\n\nAnswer 3.\n\n"
    )
    assert full_transcript(doc) == parse(numbered_conversation(5)).transcript()
    archive(doc, keep=1)
    assert archive_path(doc).read_text().count("Question 3?") == 1


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (START.format(nonce="abc123") + "\nstreaming…", "streaming"),
        (
            "<!-- agentdoc:approval abc123 (tick one box and save) -->\n- [ ] Allow",
            "permission request",
        ),
    ],
)
def test_a_busy_document_is_not_archived(tmp_path: Path, extra: str, says: str) -> None:
    doc = tmp_path / "long.md"
    original = numbered_conversation(4).replace("Answer 4.", f"Answer 4.\n\n{extra}")
    doc.write_text(original)
    with pytest.raises(AgentdocError, match=says):
        archive(doc, keep=1)
    assert doc.read_text() == original
    assert not archive_path(doc).exists()


def test_nothing_to_archive_says_so(tmp_path: Path) -> None:
    doc = tmp_path / "short.md"
    doc.write_text(numbered_conversation(2))
    with pytest.raises(AgentdocError, match="nothing to archive"):
        archive(doc, keep=3)


def test_someone_elses_file_of_that_name_is_left_alone(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4))
    archive_path(doc).write_text("my own notes\n")
    with pytest.raises(AgentdocError, match=r"not long\.md's archive"):
        archive(doc, keep=1)
    assert archive_path(doc).read_text() == "my own notes\n"


def test_the_edit_diff_does_not_see_the_move(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4, pending="Next?"))
    history.record_turn(doc, parse(doc.read_text()).transcript(3), 4, SESSION)
    archive(doc, keep=1)
    snapshot = history.read_snapshot(doc)
    assert history.history_edits(snapshot, full_transcript(doc), SESSION) is None
    # An edit to an archived exchange is still news to the model.
    stored = archive_path(doc)
    stored.write_text(stored.read_text().replace("Answer 2.", "Answer two."))
    edits = history.history_edits(snapshot, full_transcript(doc), SESSION)
    assert edits is not None and "+Assistant: Answer two." in edits


def test_a_rebuilt_session_gets_the_archived_history(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4, pending="Next?"))
    archive(doc, keep=1)
    parsed = parse(doc.read_text())
    plan = prepare_turn(doc, parsed, "Next?", "start", Settings())
    assert plan.turn == 5
    assert "Question 1?" in plan.request.prompt and "Answer 3." in plan.request.prompt
    assert "Question 4?" in plan.request.prompt
    assert plan.known == parse(numbered_conversation(4)).transcript()


def test_a_fork_takes_the_archive_along(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4, pending=""))
    archive(doc, keep=2)
    with pytest.raises(AgentdocError, match="between 3 and 4"):
        fork(doc, tmp_path / "early.md", 1)
    new = tmp_path / "branch.md"
    fork(doc, new, 3)
    text = new.read_text()
    assert "[branch.archive.md](branch.archive.md)" in text
    assert "Question 3?" in text and "Question 4?" not in text
    assert parse(text).turn_count() == 3
    assert "Question 1?" in archive_path(new).read_text()
    assert full_transcript(new) == parse(numbered_conversation(3)).transcript()


def test_the_command(tmp_path: Path) -> None:
    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(5))
    result = CliRunner().invoke(cli, ["archive", str(doc), "--keep", "2"])
    assert result.exit_code == 0, result.output
    assert "moved 3 exchange(s)" in result.output
    again = CliRunner().invoke(cli, ["archive", str(doc), "--keep", "2"])
    assert again.exit_code == 1
    assert "nothing to archive" in again.output


def test_move_is_pure(tmp_path: Path) -> None:
    text = numbered_conversation(3)
    moved = move(parse(text), 0, "x.md", None)
    assert moved is not None and moved.moved == 3
    assert "Question 3?" not in moved.document
    assert moved.document.endswith("## User\n\n")


def test_a_lost_session_is_rebuilt_with_the_archived_history(tmp_path: Path) -> None:
    from agentdoc.turn.session import Facts, plan_turn

    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4, pending="Next?"))
    archive(doc, keep=1)
    parsed = parse(doc.read_text())
    facts = Facts(session_found=False, archived=history.archived_transcript(doc, parsed))
    plan = plan_turn(doc, parsed, "Next?", "run", Settings(), facts=facts)
    assert plan.new_session and plan.turn == 5
    assert "Question 1?" in plan.request.prompt and "Question 4?" in plan.request.prompt
    resumed = plan_turn(doc, parsed, "Next?", "run", Settings(), facts=Facts(session_found=True))
    assert resumed.request.prompt == "Next?"  # the live session already knows it all


def test_undo_after_an_archive_keeps_the_history_whole(tmp_path: Path) -> None:
    from agentdoc.conversation import undo

    doc = tmp_path / "long.md"
    doc.write_text(numbered_conversation(4))
    archive(doc, keep=1)
    undone = undo(doc, Settings(), environ={}, clear=own_leave)
    assert undone.turn == 4
    snapshot = history.read_snapshot(doc)
    assert snapshot is not None and snapshot.turns == 3
    assert snapshot.transcript == parse(numbered_conversation(3)).transcript()
    with pytest.raises(AgentdocError, match="turn 3 is in its archive"):
        text = doc.read_text()
        doc.write_text(text[: text.rindex("## User")] + "## User\n\n")
        undo(doc, Settings(), environ={}, clear=own_leave)
