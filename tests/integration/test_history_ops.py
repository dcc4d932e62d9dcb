"""Fork at a turn, turn marks, undo and git per turn, without a CLI (see test_e2e_history.py)."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import TurnMark
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.claude import rewind
from agentdoc.agents.claude.launch import shape
from agentdoc.agents.claude.process import build_argv
from agentdoc.agents.claude.warm import user_message
from agentdoc.config import Settings
from agentdoc.conversation.forking import fork
from agentdoc.conversation.undoing import check_undo, forget, undo, undone_text
from agentdoc.daemon.bulk import judge
from agentdoc.document import STREAMING_MARK
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError
from agentdoc.records import marks
from agentdoc.turn import gitcommit
from agentdoc.turn.session import Facts, plan_turn
from tests.support.clearance import leave_for, own_leave

S1 = "11111111-2222-4333-8444-555555555555"
S2 = "22222222-2222-4333-8444-555555555555"
AT = "33333333-2222-4333-8444-555555555555"
SETTINGS = Settings(claude="claude")


def conversation(*exchanges: tuple[str, str], meta: str = "", pending: str = "") -> str:
    parts = [f"---\ntitle: Chat\nagentdoc: {{{meta}}}\n---\n\n# Chat\n"]
    for prompt, reply in exchanges:
        parts.append(f"## User\n\n{prompt}\n\n## Assistant\n\n{reply}\n")
    parts.append(f"## User\n\n{pending}\n" if pending else "## User\n\n")
    return "\n".join(parts)


# -- the session file ------------------------------------------------------------------------


def rec(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["model"] = extra.pop("model", "claude-x")
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def tool_use(name: str, **arguments: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"t-{name}", "name": name, "input": arguments}]


RESULT = [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]
RECORDS = [
    rec("user", "p1", None, "First?", timestamp="2026-01-01T10:00:00.000Z"),
    rec("assistant", "a1", "p1", [{"type": "text", "text": "One."}]),
    rec("user", "p2", "a1", "Write it.", timestamp="2026-01-01T10:01:00.000Z"),
    rec("assistant", "a2", "p2", tool_use("Write", file_path="/w/new.txt", content="x")),
    {"type": "file-history-snapshot", "snapshot": {"messageId": "p2", "trackedFileBackups": {}}},
    {
        "type": "file-history-snapshot",
        "snapshot": {"messageId": "p2", "trackedFileBackups": {"new.txt": {"version": 1}}},
    },
    rec("user", "r2", "a2", RESULT),
    rec("assistant", "side", "r2", tool_use("Bash", command="rm -rf /"), isSidechain=True),
    rec("assistant", "a2b", "r2", tool_use("Read", file_path="/w/old.txt")),
    rec("user", "r2b", "a2b", RESULT),
    rec("assistant", "a2c", "r2b", [{"type": "text", "text": "Written."}]),
    rec("assistant", "syn", "a2c", [{"type": "text", "text": "x"}], model="<synthetic>"),
    rec("user", "p3", "syn", "First?", timestamp="2026-01-01T10:02:00.000Z"),
]


def test_a_turn_runs_from_its_prompt_to_its_last_reply_record() -> None:
    turn = rewind.turn_from(RECORDS, "p2")
    assert turn is not None and turn.end == "a2c"
    assert [t.name for t in turn.tools] == ["Write", "Read"]  # not the subagent's Bash
    assert turn.tracked == {"new.txt"}
    first = rewind.turn_from(RECORDS, "p1")
    assert first is not None and (first.end, first.tools) == ("a1", ())
    assert rewind.turn_from(RECORDS, "p3") is None  # no reply yet


def test_a_tool_the_cli_refused_or_a_failed_edit_changed_nothing() -> None:
    denied = "Claude requested permissions to use Bash, but you haven't granted it yet."
    records = [
        rec("user", "p", None, "Go."),
        rec("assistant", "a", "p", tool_use("Bash", command="make")),
        rec(
            "user",
            "r",
            "a",
            [{**RESULT[0], "tool_use_id": "t-Bash", "is_error": True, "content": denied}],
        ),
        rec("assistant", "b", "r", tool_use("Edit", file_path="/w/x.txt")),
        rec(
            "user",
            "s",
            "b",
            [
                {
                    **RESULT[0],
                    "tool_use_id": "t-Edit",
                    "is_error": True,
                    "content": "String to replace not found",
                }
            ],
        ),
        rec("assistant", "c", "s", tool_use("Bash", command="rm x")),
        rec(
            "user",
            "t",
            "c",
            [{**RESULT[0], "tool_use_id": "t-Bash", "is_error": True, "content": "Exit code 1"}],
        ),
        rec("assistant", "e", "t", [{"type": "text", "text": "Could not."}]),
    ]
    turn = rewind.turn_from(records[:5] + records[-1:], "p")
    assert turn is not None and rewind.files_unrestorable(turn, Path("/w")) == []
    assert rewind.changes_files(turn)  # the failed Edit: rewinding it is harmless
    # A command that failed may still have changed something: not harmless.
    tools = rewind.turn_from(records, "p")
    assert tools is not None and rewind.files_unrestorable(tools, Path("/w")) != []


def test_2_1_330_names_backed_up_files_in_delta_records() -> None:
    delta = {"type": "file-history-delta", "snapshotMessageId": "p2", "trackingPath": "old.txt"}
    turn = rewind.turn_from([*RECORDS, delta], "p2")
    assert turn is not None and turn.tracked == {"new.txt", "old.txt"}


@pytest.mark.parametrize(
    ("text", "since", "found"),
    [
        ("First?", "", "p3"),  # the latest of two prompts with the same words
        ("First?", "2026-01-01T10:01:30.000Z", "p3"),
        ("Write it.", "2026-01-01T10:01:30.000Z", None),  # older than the turn: not it
        ("Write it.", "", "p2"),
        ("Never sent.", "", None),
    ],
)
def test_the_prompt_just_sent_is_found_by_its_words_and_time(
    text: str, since: str, found: str | None
) -> None:
    assert rewind.find_prompt(RECORDS, text, since) == found


@pytest.mark.parametrize(
    ("command", "reads"),
    [
        ("ls -la", True),
        ("git status && git diff HEAD", True),
        ("grep -rn foo src | head -5", True),
        ("find . -name '*.py'", True),
        ("echo hi > out.txt", False),
        ("find . -delete", False),
        ("cat $(rm x)", False),
        ("git commit -m x", False),
        ("git", False),
        ("rm x", False),
        ("python script.py", False),
        ("ls; touch x", False),
    ],
)
def test_only_commands_that_certainly_read_are_harmless(command: str, reads: bool) -> None:
    assert rewind.reads_only(command) is reads


def session_turn(tool: rewind.ToolUse, tracked: set[str]) -> rewind.SessionTurn:
    return rewind.SessionTurn("p", "e", (tool,), frozenset(tracked))


@pytest.mark.parametrize(
    ("tool", "tracked", "reason"),
    [
        (rewind.ToolUse("Write", {"file_path": "/w/a.txt"}), {"a.txt"}, None),
        (rewind.ToolUse("Edit", {"file_path": "/elsewhere/b.txt"}), {"/elsewhere/b.txt"}, None),
        (rewind.ToolUse("Read", {"file_path": "/w/a.txt"}), set(), None),
        (rewind.ToolUse("Bash", {"command": "ls"}), set(), None),
        (rewind.ToolUse("Write", {"file_path": "/w/a.txt"}), set(), "kept no copy"),
        (rewind.ToolUse("Bash", {"command": "make"}), set(), "Bash `make` may have changed"),
        (rewind.ToolUse("mcp__db__drop", {}), set(), "mcp__db__drop may have changed"),
    ],
)
def test_what_cannot_be_restored_exactly_is_named(
    tool: rewind.ToolUse, tracked: set[str], reason: str | None
) -> None:
    found = rewind.files_unrestorable(session_turn(tool, tracked), Path("/w"))
    assert (found == []) if reason is None else (reason in " ".join(found))


def test_the_warm_prompt_carries_the_id_the_session_records() -> None:
    assert b'"uuid": "m-1"' in user_message("Hi", "m-1")
    assert b"uuid" not in user_message("Hi")


def test_a_fork_at_a_turn_is_cut_there_in_one_argv_token() -> None:
    request = AgentRequest(
        "p", Path("."), resume=S1, fork=True, resume_at=AT, clearance=leave_for(Path("."))
    )
    argv = build_argv("claude", request, SETTINGS)
    assert [a for a in argv if "resume" in a or "fork" in a] == [
        f"--resume={S1}",
        "--fork-session",
        f"--resume-session-at={AT}",
    ]
    plain = AgentRequest("p", Path("."), resume=S1, resume_at=AT, clearance=leave_for(Path(".")))
    assert not any("session-at" in a for a in build_argv("claude", plain, SETTINGS))


# -- the marks file --------------------------------------------------------------------------


def test_marks_round_trip_and_a_turn_replaces_the_later_ones(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    for turn in (1, 2, 3):
        marks.set_mark(doc, turn, TurnMark(S1, f"p{turn}"))
    marks.set_mark(doc, 2, TurnMark(S2, "q2"))
    assert marks.read_marks(doc) == {1: TurnMark(S1, "p1"), 2: TurnMark(S2, "q2")}
    marks.set_mark(doc, 2, None)
    assert marks.read_marks(doc) == {1: TurnMark(S1, "p1")}


def test_damaged_marks_are_left_out() -> None:
    assert marks.parse_marks("not json") == {}
    text = '{"1": {"session": "s", "start": "p"}, "2": {"session": 3}, "x": {}, "3": []}'
    assert marks.parse_marks(text) == {1: TurnMark("s", "p")}


# -- planning a turn -------------------------------------------------------------------------


def plan(text: str) -> Any:
    doc = document.parse(text)
    facts = Facts(session_found=True)
    return plan_turn(Path("chat.md"), doc, doc.pending_prompt() or "", "run", SETTINGS, facts=facts)


def test_after_an_undo_the_next_prompt_forks_the_session_at_the_turn_before() -> None:
    text = conversation(("one", "One."), meta=f"session: {S1}, resume_at: {AT}", pending="two")
    found = plan(text)
    request = found.request
    assert (request.resume, request.fork, request.resume_at) == (S1, True, AT)
    assert request.session_id not in (None, S1) and found.new_session


def test_a_fork_with_a_mark_continues_the_parents_session_cut_at_that_turn() -> None:
    lineage = f"document: chat.md, session: {S1}, turn: 1, fork_session: true, at: {AT}"
    found = plan(conversation(("one", "One."), meta=f"forked_from: {{{lineage}}}", pending="q"))
    assert (found.request.resume, found.request.resume_at) == (S1, AT)
    assert found.note == "forked from chat.md, turn 1"


def test_a_fork_without_a_mark_is_seeded_and_the_footer_says_so() -> None:
    lineage = f"document: chat.md, session: {S1}, turn: 1, fork_session: false"
    found = plan(conversation(("one", "One."), meta=f"forked_from: {{{lineage}}}", pending="q"))
    assert found.request.resume is None and "<transcript>" in found.request.prompt
    assert found.note == "forked from chat.md, turn 1; a new session seeded with the transcript"


def test_a_fork_at_an_unmarked_earlier_turn_plans_a_seeded_session(tmp_path: Path) -> None:
    parent = tmp_path / "chat.md"
    parent.write_text(conversation(("one", "One."), ("two", "Two."), meta=f"session: {S1}"))
    found = fork(parent, tmp_path / "early.md", 1, environ={})
    assert not found.lineage.fork_session and found.lineage.at is None
    lineage = document.parse((tmp_path / "early.md").read_text()).meta.forked_from
    assert lineage is not None and "at" not in lineage


def test_a_resume_point_must_be_an_id_not_a_flag() -> None:
    with pytest.raises(document.DocumentError, match="resume_at"):
        document.parse(conversation(meta=f"session: {S1}, resume_at: --evil"))


# -- undo ------------------------------------------------------------------------------------


@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_undo_leaves_the_prompt_pending_and_the_scratchpad_in_place(nl: str) -> None:
    before = conversation(("one", "One."), ("two", "Two.")).replace("\n", nl)
    after = undone_text(document.parse(before))
    assert after == conversation(("one", "One."), pending="two").replace("\n", nl)
    noted = before + f"<!-- a note -->{nl}"
    assert undone_text(document.parse(noted)).endswith(f"two{nl}{nl}<!-- a note -->{nl}")


def test_undo_forgets_the_turn_through_the_turn_before_or_a_new_session() -> None:
    assert forget(2, (S2, AT)) == {"session": S2, "resume_at": AT}
    assert forget(2, None) == {"session": None, "resume_at": None}  # seeded next time
    assert forget(1, (S2, AT)) == {"session": None, "resume_at": None}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (conversation(pending="hi"), "nothing to undo"),
        (conversation(("one", "One.")), None),
        (conversation(("one", "One."), pending="next"), "a prompt waits below the last reply"),
        (conversation(("one", "One.<!-- agentdoc:streaming x -->")), "a reply is streaming"),
    ],
)
def test_undo_refuses_when_there_is_nothing_to_take_back(
    tmp_path: Path, text: str, why: str | None
) -> None:
    text = text.replace("<!-- agentdoc:streaming x -->", STREAMING_MARK)
    doc = document.parse(text)
    if why is None:
        assert check_undo(tmp_path / "chat.md", text, doc) == 1
        return
    with pytest.raises(AgentdocError, match=why):
        check_undo(tmp_path / "chat.md", text, doc)


def test_an_unmarked_turn_is_undone_only_if_no_tool_ran(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    tools = "<details><summary>🔧 Bash: make — 1 line</summary>\n\n</details>\n\nDone."
    path.write_text(conversation(("one", "One."), ("two", tools), meta=f"session: {S1}"))
    before = path.read_bytes()
    with pytest.raises(AgentdocError, match="its tools ran"):
        undo(path, SETTINGS, {}, clear=own_leave)
    assert path.read_bytes() == before

    path.write_text(conversation(("one", "One."), ("two", "Two."), meta=f"session: {S1}"))
    done = undo(path, SETTINGS, {}, clear=own_leave)
    assert (done.turn, done.restored, done.committed) == (2, False, False)
    doc = document.parse(path.read_text())
    # No mark of turn 1: the next prompt starts a session seeded with the transcript.
    assert doc.meta.session is None and doc.pending_prompt() == "two"


def test_the_daemon_does_not_send_the_prompt_an_undo_left_pending() -> None:
    before = document.parse(conversation(("one", "One."), ("two", "Two."), meta=f"session: {S1}"))
    after = document.parse(undone_text(before))
    assert judge(before, after).verdict == "bulk"
    assert judge(after, after).verdict == "send"  # saved again by the person: sent


# -- git per turn ----------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=30
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.name", "Test")
    git(tmp_path, "config", "user.email", "test@example.invalid")
    (tmp_path / "other.txt").write_text("other\n")
    git(tmp_path, "add", "other.txt")
    git(tmp_path, "commit", "-q", "-m", "start")
    return tmp_path


def test_the_commit_holds_the_document_and_its_tracked_sidecar_only(repo: Path) -> None:
    doc, sidecar = repo / "chat.md", repo / "chat.thinking.md"
    sidecar.write_text("thinking\n")
    git(repo, "add", "chat.thinking.md")
    git(repo, "commit", "-q", "-m", "sidecar")
    doc.write_text(conversation(("one", "One.")))
    sidecar.write_text("more thinking\n")
    (repo / "other.txt").write_text("staged\n")
    git(repo, "add", "other.txt")
    assert gitcommit.commit(doc, gitcommit.turn_message(doc, 1))
    assert git(repo, "show", "--name-only", "--format=%s", "HEAD").split() == [
        "chat.md:",
        "turn",
        "1",
        "(agentdoc)",
        "chat.md",
        "chat.thinking.md",
    ]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["other.txt"]


def test_the_commit_is_skipped_with_a_log_line(
    repo: Path, tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    doc = repo / "chat.md"
    doc.write_text(conversation(("one", "One.")))
    (repo / ".git" / "index.lock").write_text("")
    assert not gitcommit.commit(doc, "m")
    (repo / ".git" / "index.lock").unlink()
    outside = tmp_path_factory.mktemp("plain") / "chat.md"
    outside.write_text("x")
    assert not gitcommit.commit(outside, "m")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'not today' >&2\nexit 1\n")
    hook.chmod(0o755)
    assert not gitcommit.commit(doc, "m")
    assert git(repo, "rev-list", "--count", "HEAD") == "1\n"
    reasons = [r.getMessage() for r in caplog.records]
    assert any("git is busy (index.lock exists)" in r for r in reasons)
    assert any("not inside a git work tree" in r for r in reasons)
    assert any("git commit failed: not today" in r for r in reasons)


@pytest.mark.parametrize(
    ("meta", "config", "on"),
    [
        ("", "off", False),
        ("", "commit", True),
        ("git: commit", "off", True),
        ("git: off", "commit", False),
    ],
)
def test_git_per_turn_is_opt_in(meta: str, config: str, on: bool) -> None:
    doc = document.parse(conversation(meta=meta))
    assert gitcommit.enabled(doc, Settings.model_validate({"git": config})) is on


def test_the_turn_just_run_is_read_from_the_end_of_a_long_session_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rewind, "TAIL", 300)  # a few records per read, so it reads back
    folder = tmp_path / "home" / ".claude" / "projects" / "x"
    folder.mkdir(parents=True)
    lines = [json.dumps({**r, "cwd": str(tmp_path)}) for r in RECORDS]
    filler = rec("assistant", "f", "p3", [{"type": "text", "text": "y" * 200}])
    (folder / f"{S1}.jsonl").write_text("\n".join(lines + [json.dumps(filler)] * 20) + "\n")
    env = {"HOME": str(tmp_path / "home")}
    assert rewind.session_prompt(env, S1, tmp_path, "First?", "2026-01-01T10:01:30.000Z") == "p3"
    assert rewind.session_prompt(env, S1, tmp_path, "Write it.", "2026-01-01T10:01:30.000Z") is None
    assert rewind.session_prompt(env, S1, tmp_path, "Write it.") == "p2"
    assert rewind.session_prompt(env, S2, tmp_path, "First?") is None  # no such session


def test_with_git_per_turn_an_undo_is_committed_too(repo: Path) -> None:
    path = repo / "chat.md"
    path.write_text(conversation(("one", "One."), ("two", "Two."), meta="git: commit"))
    git(repo, "add", "chat.md")
    git(repo, "commit", "-q", "-m", "two turns")
    (repo / "other.txt").write_text("staged\n")
    git(repo, "add", "other.txt")
    done = undo(path, SETTINGS, {}, clear=own_leave)
    assert done.committed
    assert git(repo, "log", "-1", "--format=%s") == "chat.md: undo turn 2 (agentdoc)\n"
    assert git(repo, "show", "HEAD:chat.md") == path.read_text()
    assert git(repo, "diff", "--cached", "--name-only").split() == ["other.txt"]


def test_undo_takes_the_turns_thinking_out_of_the_sidecar(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    path.write_text(conversation(("one", "One."), ("two", "Two.")))
    sidecar = tmp_path / "chat.thinking.md"
    sections = [f'<a id="turn-{n}"></a>\n## Turn {n}\n\nthought {n}\n' for n in (1, 2)]
    sidecar.write_text("# Thinking: chat.md\n\n" + "\n".join(sections))
    undo(path, SETTINGS, {}, clear=own_leave)
    assert sidecar.read_text() == "# Thinking: chat.md\n\n" + sections[0]


def test_a_warm_cli_started_for_a_cut_fork_can_serve_the_turns_after_it() -> None:
    cut = ["claude", "-p", f"--resume={S1}", "--fork-session", f"--resume-session-at={AT}"]
    assert shape(cut) == shape(["claude", "-p", f"--resume={S2}"])
