"""`agentdoc fork`: the new document, its lineage, its first prompt, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.conversation.forking import fork
from agentdoc.document import parser as document
from agentdoc.document import splice
from agentdoc.errors import AgentdocError
from agentdoc.records import history
from agentdoc.turn.runner import TurnRunner
from agentdoc.turn.session import working_dir
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude

PARENT_SESSION = "11111111-2222-4333-8444-555555555555"

PARENT = f"""---
title: Lifetimes   # a comment that must survive
tags: [rust]
agentdoc:
  session: {PARENT_SESSION}
  model: sonnet
---

# Lifetimes

## User

first question

## Assistant

first answer

<sub>sonnet · 10 in / 5 out · 1.0 s · [thinking](chat.thinking.md#turn-1)</sub>

## User

second question

## Assistant

second answer

<sub>sonnet · 10 in / 5 out · 1.0 s · [thinking](chat.thinking.md#turn-2)</sub>

## User

a prompt still pending in the parent
"""


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(PARENT)
    return path


def meta_of(path: Path) -> Any:
    return document.parse(path.read_text()).meta


def ask(
    path: Path,
    prompt: str,
    fake: FakeClaude,
    environ: dict[str, str] | None = None,
    **settings: Any,
) -> Any:
    """`prompt` typed at the end of `path`, and the turn it makes run to its end."""
    path.write_text(path.read_text() + prompt)
    config = fake.settings(**settings)
    return TurnRunner(path, config, clear=own_leave, environ=environ or fake.env).run()


def deep_branch(tmp_path: Path) -> Path:
    """Where a fork two folders below the parent's goes; the folders are made."""
    sub = tmp_path / "branches" / "deep"
    sub.mkdir(parents=True)
    return sub / "branch.md"


def argv_of(call: dict[str, Any]) -> list[str]:
    return list(call["argv"])


def test_fork_at_the_last_turn_copies_everything_and_records_lineage(
    parent: Path, tmp_path: Path
) -> None:
    new = tmp_path / "branch.md"
    plan = fork(parent, new)
    assert plan.turn == 2 and plan.lineage.fork_session
    text = new.read_text()
    doc = document.parse(text)
    assert [t.role for t in doc.turns] == ["user", "assistant"] * 2 + ["user"]
    assert doc.pending_prompt() is None  # a fresh, empty prompt; the parent's pending one stays
    assert "a prompt still pending" not in text
    assert doc.meta.session is None and doc.meta.model == "sonnet"
    assert doc.meta.forked_from == {
        "document": "chat.md",
        "session": PARENT_SESSION,
        "turn": 2,
        "fork_session": True,
    }
    assert text.startswith("---\ntitle: Lifetimes   # a comment that must survive\ntags: [rust]")
    assert text.endswith(
        "second answer\n\n<sub>sonnet · 10 in / 5 out · 1.0 s · "
        "[thinking](chat.thinking.md#turn-2)</sub>\n\n## User\n\n"
    )
    assert doc.transcript() == document.parse(PARENT).transcript()
    assert parent.read_text() == PARENT


def test_fork_at_an_earlier_turn(parent: Path, tmp_path: Path) -> None:
    new = tmp_path / "early.md"
    plan = fork(parent, new, turn=1)
    doc = document.parse(new.read_text())
    assert plan.turn == 1 and not plan.lineage.fork_session
    assert doc.turn_count() == 1 and "second" not in new.read_text()
    assert doc.meta.forked_from is not None and doc.meta.forked_from["turn"] == 1
    assert doc.meta.forked_from["session"] == PARENT_SESSION  # lineage, not continued
    assert parent.read_text() == PARENT


def test_fork_first_prompt_continues_the_parent_session_as_a_fork(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    new = tmp_path / "branch.md"
    fork(parent, new)
    outcome = ask(new, "what about statics?\n", plain_claude)
    (call,) = plain_claude.calls()
    argv = argv_of(call)
    assert f"--resume={PARENT_SESSION}" in argv and "--fork-session" in argv
    (chosen,) = [a.split("=", 1)[1] for a in argv if a.startswith("--session-id=")]
    assert chosen != PARENT_SESSION
    assert argv.index("--fork-session") == argv.index(f"--resume={PARENT_SESSION}") + 1
    assert call["stdin"] == "what about statics?"
    assert call["cwd"] == str(parent.parent)
    after = document.parse(new.read_text())
    assert after.meta.session not in (None, PARENT_SESSION)
    assert "forked from chat.md, turn 2" in after.turns[5].content
    assert outcome.state == "done"
    assert parent.read_text() == PARENT
    # From now on the fork resumes its own session, never the parent's.
    ask(new, "and then?\n", plain_claude)
    argv = argv_of(plain_claude.calls()[-1])
    assert f"--resume={after.meta.session}" in argv and "--fork-session" not in argv


def test_fork_at_an_earlier_turn_starts_a_session_seeded_with_turns_1_to_n(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    new = tmp_path / "early.md"
    fork(parent, new, turn=1)
    ask(new, "something else entirely\n", plain_claude)
    (call,) = plain_claude.calls()
    argv = argv_of(call)
    assert not any(a.startswith("--resume") for a in argv) and "--fork-session" not in argv
    assert any(a.startswith("--session-id=") for a in argv)
    stdin = call["stdin"]
    assert "User: first question\n\nAssistant: first answer" in stdin
    assert "second answer" not in stdin and "second question" not in stdin
    assert stdin.endswith("something else entirely")
    assert parent.read_text() == PARENT


def test_fork_of_a_document_without_a_session_is_seeded(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    parent = tmp_path / "chat.md"
    parent.write_text(PARENT.replace(f"  session: {PARENT_SESSION}\n", ""))
    new = tmp_path / "branch.md"
    plan = fork(parent, new)
    assert plan.lineage.session is None and not plan.lineage.fork_session
    ask(new, "go\n", plain_claude)
    (call,) = plain_claude.calls()
    assert not any(a.startswith("--resume") for a in argv_of(call))
    assert "second answer" in call["stdin"]


def test_lost_parent_session_rebuilds_the_fork_from_its_transcript(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    new = tmp_path / "branch.md"
    fork(parent, new)
    ask(new, "go\n", plain_claude, {**plain_claude.env, "HOME": str(tmp_path / "empty-home")})
    (call,) = plain_claude.calls()
    assert not any(a.startswith("--resume") for a in argv_of(call))
    assert "second answer" in call["stdin"]
    assert "the previous one was not found" in new.read_text()


def test_fork_outside_the_parents_tree_starts_its_own_session(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    new = deep_branch(tmp_path)
    fork(parent, new)
    doc = document.parse(new.read_text())
    assert doc.meta.cwd is None
    assert doc.meta.forked_from is not None
    assert doc.meta.forked_from["document"] == "../../chat.md"
    assert doc.meta.forked_from["fork_session"] is False
    assert "[thinking](../../chat.thinking.md#turn-2)" in new.read_text()
    ask(new, "go\n", plain_claude)
    (call,) = plain_claude.calls()
    assert call["cwd"] == str(new.parent)
    assert not any(a.startswith("--resume") for a in argv_of(call))
    assert "second answer" in call["stdin"]


def test_fork_into_another_folder_runs_in_the_parents_folder_when_allowed(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    new = deep_branch(tmp_path)
    fork(parent, new, allow_cwd_outside=True)
    doc = document.parse(new.read_text())
    assert doc.meta.cwd == "../.."
    assert working_dir(new, doc, allow_outside=True) == parent.parent.resolve()
    ask(new, "go\n", plain_claude, allow_cwd_outside=True)
    assert plain_claude.calls()[0]["cwd"] == str(parent.parent.resolve())
    # Without the user's permission the same document is refused, not run elsewhere.
    with pytest.raises(AgentdocError, match="outside the document's folder"):
        ask(new, "again\n", plain_claude)


def test_fork_keeps_a_parent_cwd_working(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "forks").mkdir()
    parent = tmp_path / "notes" / "chat.md"
    parent.write_text(PARENT.replace("  model: sonnet\n", "  model: sonnet\n  cwd: ../project\n"))
    same_folder, other = tmp_path / "notes" / "b.md", tmp_path / "forks" / "b.md"
    fork(parent, same_folder, allow_cwd_outside=True)
    fork(parent, other, allow_cwd_outside=True)
    for new in (same_folder, other):
        doc = document.parse(new.read_text())
        assert working_dir(new, doc, allow_outside=True) == (tmp_path / "project")
    assert meta_of(same_folder).cwd == "../project"


def test_fork_back_into_the_parents_working_folder_drops_cwd(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    parent = tmp_path / "notes" / "chat.md"
    parent.write_text(PARENT.replace("  model: sonnet\n", "  model: sonnet\n  cwd: ..\n"))
    new = tmp_path / "b.md"
    fork(parent, new)
    assert meta_of(new).cwd is None
    assert working_dir(new, document.parse(new.read_text())) == tmp_path.absolute()


def test_fork_keeps_crlf_and_bom(tmp_path: Path) -> None:
    parent = tmp_path / "win.md"
    original = ("\ufeff" + PARENT).replace("\n", "\r\n").encode()
    parent.write_bytes(original)
    new = tmp_path / "b.md"
    fork(parent, new)
    data = new.read_bytes().decode()
    assert data.startswith("\ufeff---\r\n") and "\n" not in data.replace("\r\n", "")
    assert data.endswith("\r\n\r\n## User\r\n\r\n")
    assert parent.read_bytes() == original


STREAMING = PARENT.replace(
    "a prompt still pending in the parent\n",
    "a prompt being answered\n\n## Assistant\n\n"
    + splice.START.format(nonce="abcd1234")
    + "\nhalf a reply\n"
    + splice.END.format(nonce="abcd1234")
    + "\n",
)


@pytest.mark.parametrize(
    ("text", "new_name", "turn", "message"),
    [
        (STREAMING, "b.md", None, "streaming"),
        (PARENT, "b.md", 0, "between 1 and 2"),
        (PARENT, "b.md", 3, "between 1 and 2"),
        (PARENT, "b.md", -1, "between 1 and 2"),
        (PARENT, "b.txt", None, "end in .md"),
        (PARENT, "b", None, "end in .md"),
        (PARENT, "chat.md", None, "already exists"),
        (PARENT, "missing/b.md", None, "does not exist"),
        ("---\nagentdoc: {}\n---\n\n## User\n\nhi\n", "b.md", None, "no completed exchange"),
        ("# not a session document\n", "b.md", None, "agentdoc"),
    ],
)
def test_fork_refuses(
    tmp_path: Path, text: str, new_name: str, turn: int | None, message: str
) -> None:
    parent = tmp_path / "chat.md"
    parent.write_text(text)
    new = tmp_path / new_name
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(AgentdocError, match=message):
        fork(parent, new, turn)
    after = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert after == before  # nothing created, nothing changed


def test_fork_never_overwrites_an_existing_file(parent: Path, tmp_path: Path) -> None:
    new = tmp_path / "b.md"
    new.write_text("mine")
    with pytest.raises(AgentdocError, match="already exists"):
        fork(parent, new)
    assert new.read_text() == "mine"
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(AgentdocError, match="already exists"):
        fork(parent, dangling)
    assert not (tmp_path / "nowhere.md").exists()


def test_fork_carries_the_snapshot_so_parent_edits_are_still_sent(
    parent: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    known = document.parse(PARENT).transcript()
    history.write_snapshot(parent, history.Snapshot(PARENT_SESSION, 2, known))
    parent.write_text(PARENT.replace("first answer", "first answer, corrected"))
    new = tmp_path / "branch.md"
    fork(parent, new)
    ask(new, "go\n", plain_claude)
    stdin = plain_claude.calls()[0]["stdin"]
    assert "-Assistant: first answer\n+Assistant: first answer, corrected" in stdin
    assert "--fork-session" in argv_of(plain_claude.calls()[0])


def test_cli_fork(parent: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    new = tmp_path / "b.md"
    result = runner.invoke(
        cli, ["fork", str(parent), str(new), "--turn", "1"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert "exchanges 1-1" in result.output and "new session" in result.output
    assert document.parse(new.read_text()).turn_count() == 1
    again = runner.invoke(cli, ["fork", str(parent), str(new)], catch_exceptions=False)
    assert again.exit_code == 1 and "already exists" in again.output
    help_text = runner.invoke(cli, ["fork", "--help"], catch_exceptions=False).output
    assert "Usage:" in help_text and "--turn" in help_text
    start_help = runner.invoke(cli, ["start", "--help"], catch_exceptions=False).output
    assert "rebuild" in start_help and "transcript" in start_help


def test_fork_leaves_no_temp_files(parent: Path, tmp_path: Path) -> None:
    fork(parent, tmp_path / "b.md")
    assert sorted(os.listdir(tmp_path)) == ["b.md", "chat.md"]
