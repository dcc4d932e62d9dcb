"""Sessions that survive reality: lost sessions, interrupted replies, rewritten history.

Pure planning and prompt composition are table-driven; whole turns run the replaying fake
`claude`, with a fake $HOME as the CLI's session store.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import Reply, TextPart
from agentdoc.agents.claude import sessionstore
from agentdoc.config import Settings
from agentdoc.document import parser as document
from agentdoc.document.render import render_final
from agentdoc.errors import AgentdocError
from agentdoc.records import history
from agentdoc.turn.compose import compose_prompt
from agentdoc.turn.runner import TurnRunner
from agentdoc.turn.session import LOST_NOTE, Facts, Mode, plan_turn
from agentdoc.turn.writer import ReplyWriter
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude
from tests.support.paths import FAKE_CLAUDE, TRANSCRIPTS

OLD = "11111111-2222-4333-8444-555555555555"
PLAIN_SESSION = json.loads((TRANSCRIPTS / "plain_text.ndjson").read_text().splitlines()[0])[
    "session_id"
]


def conversation(
    *exchanges: tuple[str, str], pending: str = "", session: str | None = OLD, nl: str = "\n"
) -> str:
    meta = f"{{session: {session}}}" if session else "{}"
    parts = [f"---\ntitle: Chat\nagentdoc: {meta}\n---\n\n# Chat\n"]
    for prompt, reply in exchanges:
        parts.append(f"## User\n\n{prompt}\n\n## Assistant\n\n{reply}\n")
    parts.append(f"## User\n\n{pending}\n" if pending else "## User\n\n")
    return "\n".join(parts).replace("\n", nl)


def finished(text: str, *, interrupted: bool = False, error: str | None = None) -> str:
    """A reply block as the turn renders it (body, callout, footer)."""
    parts = (TextPart(text, True),) if text else ()
    reply = Reply(parts=parts, interrupted=interrupted, error=error)
    return render_final(
        reply, elapsed=1.0, document_name="chat.md", thinking_link=None, footer=True
    )


# --- prompt composition (pure) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "present", "absent"),
    [
        ({}, ["NEXT"], ["transcript", "diff", "interrupted"]),
        ({"transcript": "User: a\n\nAssistant: b"}, ["<transcript>", "User: a", "NEXT"], ["diff"]),
        ({"edits": "-User: a\n+User: A"}, ["```diff\n-User: a\n+User: A\n```", "NEXT"], []),
        ({"unfinished": "half an answ"}, ["interrupted", "half an answ", "NEXT"], ["diff"]),
        (
            {"edits": "-x\n+y", "unfinished": "partial"},
            ["```diff", "partial", "Reply to this new message:\n\nNEXT"],
            [],
        ),
        # A transcript already holds the edits and the partial text: they are not repeated.
        ({"transcript": "User: a", "edits": "-x", "unfinished": "p"}, ["User: a"], ["-x", "p\n"]),
        # A backtick run in the diff gets a longer fence, so it cannot close the fence early.
        ({"edits": " ```\n-````python"}, ["`````diff\n"], []),
    ],
)
def test_compose_prompt(kwargs: dict[str, str], present: list[str], absent: list[str]) -> None:
    text = compose_prompt("NEXT", **kwargs)
    assert text.endswith("NEXT")
    for needle in present:
        assert needle in text
    for needle in absent:
        assert needle not in text


def test_plain_prompt_is_sent_unchanged() -> None:
    assert compose_prompt("just this") == "just this"


# --- planning (pure, given the facts) -------------------------------------------------------

SETTINGS = Settings()


def _plan(
    tmp_path: Path,
    text: str,
    mode: Mode = "run",
    *,
    found: bool | None = None,
    snapshot: history.Snapshot | None = None,
    session: str | None = None,
    session_reply: str | None = None,
) -> Any:
    doc = document.parse(text)
    prompt = doc.pending_prompt() or ""
    facts = Facts(session_found=found, snapshot=snapshot, session_reply=session_reply)
    return plan_turn(
        tmp_path / "chat.md", doc, prompt, mode, SETTINGS, session=session, facts=facts
    )


ONE = conversation(("first question", "first answer"), pending="second question")


@pytest.mark.parametrize(
    ("mode", "found", "resume", "seeded", "note", "fallback"),
    [
        ("run", True, OLD, False, None, True),
        ("run", None, OLD, False, None, True),  # the store cannot be read: ask the CLI
        ("resume", True, OLD, False, None, True),
        ("run", False, None, True, LOST_NOTE, False),
        ("resume", False, None, True, LOST_NOTE, False),
        ("start", True, None, True, None, False),  # the explicit clean rebuild
    ],
)
def test_plan_resume_or_rebuild(
    tmp_path: Path,
    mode: Mode,
    found: bool | None,
    resume: str | None,
    seeded: bool,
    note: str | None,
    fallback: bool,
) -> None:
    plan = _plan(tmp_path, ONE, mode, found=found)
    assert plan.request.resume == resume
    assert (plan.request.session_id is not None) == seeded
    assert ("first answer" in plan.request.prompt) == seeded
    assert plan.request.prompt.endswith("second question")
    assert plan.note == note
    assert (plan.fallback is not None) == fallback
    assert plan.turn == 2
    assert plan.known == "User: first question\n\nAssistant: first answer"


def test_fallback_is_a_rebuild_that_says_so(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ONE, found=True)
    fallback = plan.fallback
    assert fallback.request.resume is None and fallback.request.session_id
    assert "<transcript>" in fallback.request.prompt and "first answer" in fallback.request.prompt
    assert fallback.note == LOST_NOTE


def test_an_explicit_session_that_is_gone_is_an_error_not_a_rebuild(tmp_path: Path) -> None:
    other = "99999999-2222-4333-8444-555555555555"
    with pytest.raises(AgentdocError, match="not found"):
        _plan(tmp_path, ONE, "resume", found=False, session=other)
    plan = _plan(tmp_path, ONE, "resume", found=True, session=other)
    assert plan.request.resume == other and plan.fallback is None


def test_first_turn_of_a_new_document_is_not_seeded(tmp_path: Path) -> None:
    plan = _plan(tmp_path, conversation(pending="hello", session=None))
    assert plan.request.prompt == "hello" and plan.request.session_id and plan.known == ""


def test_resume_without_any_session_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentdocError, match="no session to resume"):
        _plan(tmp_path, conversation(pending="hello", session=None), "resume")


# --- interrupted replies (pure) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (finished("Half of the ans", interrupted=True), "Half of the ans"),
        (finished("Streamed then", error="API Error: Connection lost"), "Streamed then"),
        (finished("", error="API Error: 500 Internal server error"), None),
        (finished("", interrupted=True), None),
        (finished("A complete answer."), None),
        ("Hand-written answer, no callout.", None),
        # The user removed the callout: the document no longer says it was interrupted.
        (finished("Half", interrupted=True).split("> [!WARNING]")[0], None),
    ],
)
def test_unfinished_reply_is_found_from_the_rendered_callout(
    reply: str, expected: str | None
) -> None:
    doc = document.parse(conversation(("q", reply), pending="next"))
    assert history.unfinished_reply(doc) == expected


def test_only_the_last_reply_counts_as_unfinished() -> None:
    text = conversation(("q1", finished("cut", interrupted=True)), ("q2", finished("done.")))
    assert history.unfinished_reply(document.parse(text)) is None


def test_unfinished_reply_in_a_crlf_document() -> None:
    text = conversation(("q", finished("line one\nline two", interrupted=True)), nl="\r\n")
    assert history.unfinished_reply(document.parse(text)) == "line one\nline two"


def test_resume_after_an_interrupted_reply_carries_its_text(tmp_path: Path) -> None:
    text = conversation(("q", finished("Half of the ans", interrupted=True)), pending="go on")
    plan = _plan(tmp_path, text, found=True)
    assert plan.request.resume == OLD
    assert "<partial-answer>\nHalf of the ans\n</partial-answer>" in plan.request.prompt


def test_resume_after_an_interrupted_reply_the_session_kept_sends_only_the_prompt(
    tmp_path: Path,
) -> None:
    text = conversation(("q", finished("Half of the ans", interrupted=True)), pending="go on")
    plan = _plan(tmp_path, text, found=True, session_reply="Half of the ans")
    assert plan.request.resume == OLD
    assert plan.request.prompt == "go on"


# --- history edits (pure) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "present", "absent"),
    [
        ("User: a\n\nAssistant: b", "User: a\n\nAssistant: b", None, []),
        ("User: a\n\nAssistant: b", "User: A\n\nAssistant: b", ["-User: a", "+User: A"], []),
        ("User: a\n\nAssistant: b", "User: a", ["-Assistant: b"], ["+User"]),
        (
            "\n".join(f"line {i}" for i in range(100)),
            "\n".join(f"line {i}" for i in range(100)).replace("line 50", "LINE 50"),
            ["-line 50", "+LINE 50", " line 49"],
            ["line 10\n", "line 90"],  # compact: one line of context
        ),
    ],
)
def test_edits_diff(before: str, after: str, present: list[str] | None, absent: list[str]) -> None:
    diff = history.edits_diff(before, after)
    if present is None:
        assert diff is None
        return
    assert diff is not None
    for needle in present:
        assert needle in diff
    for needle in absent:
        assert needle not in diff


def test_a_huge_diff_is_cut() -> None:
    before = "\n".join(f"old line {i}" for i in range(2000))
    after = "\n".join(f"new line {i}" for i in range(2000))
    diff = history.edits_diff(before, after, limit=500)
    assert diff is not None and len(diff) < 600 and "more diff lines left out" in diff


def test_resume_sends_the_diff_only_against_a_snapshot_of_the_same_session(
    tmp_path: Path,
) -> None:
    edited = ONE.replace("first question", "first question, reworded")
    mine = history.Snapshot(OLD, 1, "User: first question\n\nAssistant: first answer")
    plan = _plan(tmp_path, edited, found=True, snapshot=mine)
    assert "-User: first question\n+User: first question, reworded" in plan.request.prompt
    other = history.Snapshot("22222222-2222-4333-8444-555555555555", 1, mine.transcript)
    assert _plan(tmp_path, edited, found=True, snapshot=other).request.prompt == "second question"
    unchanged = _plan(tmp_path, ONE, found=True, snapshot=mine)
    assert unchanged.request.prompt == "second question"


@pytest.mark.parametrize(
    "snapshot",
    [
        history.Snapshot(OLD, 2, "User: a\n\nAssistant: b\n\nUser: ```x```"),
        history.Snapshot(None, 0, ""),
        history.Snapshot(OLD, 1, "User: ends with a newline\n"),
    ],
)
def test_snapshot_round_trips(snapshot: history.Snapshot) -> None:
    assert history.parse_snapshot(history.format_snapshot(snapshot)) == snapshot


@pytest.mark.parametrize("text", ["", "User: a", "<!-- agentdoc history v2 x -->\n"])
def test_a_foreign_snapshot_file_is_ignored(text: str) -> None:
    assert history.parse_snapshot(text) is None


def test_transcript_after_turn_keeps_what_the_model_was_told() -> None:
    # While the reply streamed, the user reworded turn 1: the model still knows the old words.
    now = document.parse(
        conversation(("first, reworded", "first answer"), ("second q", "second answer"))
    )
    known = "User: first\n\nAssistant: first answer"
    assert history.transcript_after_turn(known, now, 2) == (
        f"{known}\n\nUser: second q\n\nAssistant: second answer"
    )
    assert history.transcript_after_turn("", now, 1) == (
        "User: first, reworded\n\nAssistant: first answer"
    )


# --- the CLI's session store ----------------------------------------------------------------


def store_session(home: Path, session: str, cwd: Path, *, record_cwd: bool = True) -> Path:
    """Put a session file where the CLI keeps it, as the CLI would write it."""
    real = os.path.realpath(cwd)
    folder = home / ".claude" / "projects" / sessionstore.slug(real)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    records: list[dict[str, Any]] = [{"type": "queue-operation", "sessionId": session}]
    user: dict[str, Any] = {"type": "user", "sessionId": session}
    if record_cwd:
        user["cwd"] = real
    records.append(user)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"HOME": "/h"}, Path("/h/.claude")),
        ({"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c"}, Path("/c")),
        ({"CLAUDE_CONFIG_DIR": "/c"}, Path("/c")),
        ({}, None),
        ({"HOME": ""}, None),
    ],
)
def test_config_dir(environ: dict[str, str], expected: Path | None) -> None:
    assert sessionstore.config_dir(environ) == expected


def test_has_session(tmp_path: Path) -> None:
    home, cwd, elsewhere = tmp_path / "home", tmp_path / "work_a.b", tmp_path / "other"
    cwd.mkdir()
    elsewhere.mkdir()
    env = {"HOME": str(home)}
    assert sessionstore.has_session(env, OLD, cwd) is False
    store_session(home, OLD, cwd)
    assert sessionstore.has_session(env, OLD, cwd) is True
    assert sessionstore.has_session(env, OLD, elsewhere) is False  # sessions are per folder
    assert sessionstore.has_session({}, OLD, cwd) is None
    assert sessionstore.has_session(env, "a title with * in it", cwd) is None
    link = tmp_path / "link"
    link.symlink_to(cwd)
    assert sessionstore.has_session(env, OLD, link) is True  # the CLI records the real path


def test_has_session_by_folder_name_when_no_record_says_the_cwd(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "w"
    cwd.mkdir()
    store_session(home, OLD, cwd, record_cwd=False)
    assert sessionstore.has_session({"HOME": str(home)}, OLD, cwd) is True
    assert sessionstore.has_session({"HOME": str(home)}, OLD, tmp_path) is False


def test_has_session_with_claude_config_dir(tmp_path: Path) -> None:
    config, cwd = tmp_path / "config", tmp_path / "w"
    cwd.mkdir()
    folder = config / "projects" / "x"
    folder.mkdir(parents=True)
    (folder / f"{OLD}.jsonl").write_text(json.dumps({"cwd": str(cwd)}) + "\n")
    env = {"HOME": str(tmp_path / "nohome"), "CLAUDE_CONFIG_DIR": str(config)}
    assert sessionstore.has_session(env, OLD, cwd) is True


# --- whole turns with the fake CLI ----------------------------------------------------------


def run_turn(path: Path, fake: FakeClaude, environ: dict[str, str], **kwargs: Any) -> Any:
    return TurnRunner(path, fake.settings(), clear=own_leave, environ=environ, **kwargs).run()


@pytest.fixture
def chat(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(ONE)
    return path


def test_lost_session_is_rebuilt_from_the_transcript(
    chat: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    env = {**plain_claude.env, "HOME": str(tmp_path / "home")}  # a store without the session
    outcome = run_turn(chat, plain_claude, env)
    (call,) = plain_claude.calls()
    assert not any(a.startswith("--resume") for a in call["argv"])
    chosen = next(a for a in call["argv"] if a.startswith("--session-id="))
    assert chosen.split("=", 1)[1] != OLD
    assert "<transcript>" in call["stdin"] and "first answer" in call["stdin"]
    assert call["stdin"].endswith("second question")
    text = chat.read_text()
    parsed = document.parse(text)
    assert parsed.meta.session == PLAIN_SESSION != OLD
    footer = parsed.turns[3].content.strip().splitlines()[-1]
    assert footer.startswith("<sub>") and LOST_NOTE in footer
    assert outcome.state == "done"


def test_a_session_in_the_store_is_resumed(
    chat: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    home = tmp_path / "home"
    store_session(home, OLD, chat.parent)
    run_turn(chat, plain_claude, {**plain_claude.env, "HOME": str(home)})
    (call,) = plain_claude.calls()
    assert f"--resume={OLD}" in call["argv"]
    assert not any(a.startswith("--session-id") for a in call["argv"])
    assert call["stdin"] == "second question"
    assert LOST_NOTE not in chat.read_text()


def test_explicit_session_not_in_the_store_is_refused_before_anything_runs(
    chat: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    other = "99999999-2222-4333-8444-555555555555"
    env = {**plain_claude.env, "HOME": str(tmp_path / "home")}
    with pytest.raises(AgentdocError, match="not found"):
        run_turn(chat, plain_claude, env, mode="resume", session=other)
    assert plain_claude.calls() == [] and chat.read_text() == ONE


def routing_claude(tmp_path: Path, fake: FakeClaude) -> Path:
    """A fake CLI that answers "No conversation found" to every --resume, else plain text."""
    exe = tmp_path / "bin" / "routing-claude"
    unknown, plain = TRANSCRIPTS / "resume_unknown_id.ndjson", TRANSCRIPTS / "plain_text.ndjson"
    exe.write_text(
        "#!/bin/sh\n"
        f'FAKE_CLAUDE_TRANSCRIPT="{plain}"; FAKE_CLAUDE_EXIT=0\n'
        'for a in "$@"; do case "$a" in --resume=*) '
        f'FAKE_CLAUDE_TRANSCRIPT="{unknown}"; FAKE_CLAUDE_EXIT=1;; esac; done\n'
        "export FAKE_CLAUDE_TRANSCRIPT FAKE_CLAUDE_EXIT\n"
        f'exec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n'
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_no_conversation_found_is_retried_once_as_a_rebuild(
    chat: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    fake = fake_claude()
    exe = routing_claude(tmp_path, fake)
    settings = fake.settings(claude=str(exe))
    outcome = TurnRunner(
        chat, settings, clear=own_leave, environ=fake.env
    ).run()  # no HOME: store unknown
    first, second = fake.calls()
    assert f"--resume={OLD}" in first["argv"] and first["stdin"] == "second question"
    assert not any(a.startswith("--resume") for a in second["argv"])
    assert any(a.startswith("--session-id=") for a in second["argv"])
    assert "<transcript>" in second["stdin"] and "first answer" in second["stdin"]
    text = chat.read_text()
    assert "No conversation found" not in text and "[!WARNING]" not in text
    assert LOST_NOTE in text
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    assert parsed.meta.session == PLAIN_SESSION
    assert outcome.state == "done"


def test_no_conversation_found_for_an_explicit_session_stays_an_error(
    chat: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    fake = fake_claude()
    settings = fake.settings(claude=str(routing_claude(tmp_path, fake)))
    outcome = TurnRunner(chat, settings, clear=own_leave, environ=fake.env, session=OLD).run()
    assert len(fake.calls()) == 1
    assert "No conversation found" in chat.read_text() and outcome.state == "failed"


def test_interrupted_reply_is_sent_with_the_next_prompt(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude], plain_claude: FakeClaude
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(conversation(pending="hi there", session=None))
    killed = fake_claude("signal_sigterm_midstream.ndjson", exit="143")
    assert run_turn(path, killed, killed.env).state == "interrupted"
    path.write_text(path.read_text() + "and then?\n")
    run_turn(path, plain_claude, plain_claude.env)
    stdin = plain_claude.calls()[-1]["stdin"]
    assert "interrupted" in stdin and "<partial-answer>\ns0\n</partial-answer>" in stdin
    assert stdin.endswith("and then?")
    assert any(a.startswith("--resume=") for a in plain_claude.calls()[-1]["argv"])


def test_edited_history_is_sent_as_a_diff_with_the_next_prompt(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(conversation(pending="hi there", session=None))
    run_turn(path, plain_claude, plain_claude.env)
    snapshot = history.read_snapshot(path)
    assert snapshot is not None and snapshot.session == PLAIN_SESSION and snapshot.turns == 1
    assert snapshot.transcript.startswith("User: hi there\n\nAssistant: ")

    path.write_text(path.read_text() + "unchanged history\n")
    run_turn(path, plain_claude, plain_claude.env)
    assert plain_claude.calls()[-1]["stdin"] == "unchanged history"

    edited = path.read_text().replace("hi there", "hello there, edited")
    path.write_text(edited + "edited history\n")
    run_turn(path, plain_claude, plain_claude.env)
    stdin = plain_claude.calls()[-1]["stdin"]
    assert "```diff" in stdin and "-User: hi there\n+User: hello there, edited" in stdin
    assert stdin.endswith("edited history")
    # The model knows the edit now: the next turn does not send it again.
    path.write_text(path.read_text() + "one more\n")
    run_turn(path, plain_claude, plain_claude.env)
    assert plain_claude.calls()[-1]["stdin"] == "one more"


def test_a_stale_buffer_saved_as_the_reply_closes_is_not_taken_for_what_the_model_knows(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that never reloaded writes its buffer (no reply, a new prompt) in the moment
    between the reply's last write and the turn's end: the model still knows its reply, so the
    next prompt carries no diff."""
    path = tmp_path / "chat.md"
    before = conversation(pending="hi there", session=None)
    path.write_text(before)
    close = ReplyWriter.close

    def close_then_stale_save(self: ReplyWriter, *args: Any, **kwargs: Any) -> None:
        close(self, *args, **kwargs)
        path.write_text(before + "\n## User\n\nsecond question\n")

    monkeypatch.setattr(ReplyWriter, "close", close_then_stale_save)
    fake = fake_claude("plain_text.ndjson")
    run_turn(path, fake, fake.env)
    snapshot = history.read_snapshot(path)
    assert snapshot is not None and "second question" not in snapshot.transcript
    assert snapshot.transcript.startswith("User: hi there\n\nAssistant: ")


# --- whether the session already holds an interrupted reply ---------------------------------


def _record(kind: str, content: Any, **extra: Any) -> str:
    role = "assistant" if kind == "assistant" else "user"
    message = {"role": role, "content": content, **extra.pop("message", {})}
    return json.dumps({"type": kind, "message": message, **extra})


_PROMPT = _record("user", "What is a borrow?")
_PARTIAL = _record("assistant", [{"type": "text", "text": "word0 word1 "}])
_INTERRUPTED = _record("user", [{"type": "text", "text": "[Request interrupted by user]"}])
_SYNTHETIC = _record(
    "assistant",
    [{"type": "text", "text": "No response requested."}],
    message={"model": "<synthetic>"},
)


@pytest.mark.parametrize(
    ("lines", "text"),
    [
        ([], ""),
        # 2.1.197: the interrupted reply is not in the session.
        ([_PROMPT], ""),
        ([_PROMPT, _record("user", "Continue from where you left off.", isMeta=True)], ""),
        # 2.1.330: it is, followed by the interrupt mark.
        ([_PROMPT, _PARTIAL, _INTERRUPTED], "word0 word1 "),
        # Several assistant records (a tool call between) make one reply.
        (
            [
                _PROMPT,
                _PARTIAL,
                _record("user", [{"type": "tool_result", "content": "ok"}]),
                _record("assistant", [{"type": "text", "text": "word2"}]),
            ],
            "word0 word1 word2",
        ),
        # Only the reply to the last prompt.
        ([_PROMPT, _PARTIAL, _record("user", "Next?")], ""),
        # The CLI's own synthetic message and subagents' records are not the reply.
        ([_PROMPT, _SYNTHETIC], ""),
        ([_PROMPT, _record("assistant", [{"type": "text", "text": "x"}], isSidechain=True)], ""),
        # Lines that are not records are skipped.
        ([_PROMPT, "not json", '"a string"', _PARTIAL], "word0 word1 "),
    ],
)
def test_reply_text_of_a_session(lines: list[str], text: str) -> None:
    assert sessionstore.reply_text(lines) == text


@pytest.mark.parametrize(
    ("unfinished", "session_reply", "sent"),
    [
        (None, None, None),
        (None, "word0", None),
        # The session's copy is unknown: send the text rather than risk the model missing it.
        ("word0 word1", None, "word0 word1"),
        # The session dropped it (2.1.197) or kept it (2.1.330).
        ("word0 word1", "", "word0 word1"),
        ("word0 word1", "word0 word1 ", None),
        # The document wraps and trims what streamed; spacing does not count.
        ("word0\nword1", "word0  word1 ", None),
        # The session holds less than the user saw, or something else: send what the user saw.
        ("word0 word1 word2", "word0 word1", "word0 word1 word2"),
        ("word0 edited", "word0 word1", "word0 edited"),
    ],
)
def test_unfinished_text_is_sent_unless_the_session_holds_it(
    unfinished: str | None, session_reply: str | None, sent: str | None
) -> None:
    assert history.unfinished_to_send(unfinished, session_reply) == sent


def test_last_reply_text_reads_the_session_file(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "work"
    cwd.mkdir()
    session = "6a31f4cd-d8d7-4b2d-963f-23e55fc18ff0"
    folder = home / ".claude" / "projects" / sessionstore.slug(os.path.realpath(cwd))
    folder.mkdir(parents=True)
    prompt = json.loads(_PROMPT) | {"cwd": os.path.realpath(cwd)}
    lines = [json.dumps(prompt), _PARTIAL, _INTERRUPTED]
    (folder / f"{session}.jsonl").write_text("\n".join(lines) + "\n")
    env = {"HOME": str(home)}
    assert sessionstore.last_reply_text(env, session, cwd) == "word0 word1 "
    assert sessionstore.last_reply_text(env, "00000000-0000-4000-8000-000000000000", cwd) is None
    assert sessionstore.last_reply_text({}, session, cwd) is None


def test_a_session_our_record_says_answered_the_last_turn_is_resumed_before_its_file_lands(
    chat: Path, tmp_path: Path
) -> None:
    """A warm CLI writes its session file after the turn; a quick next save must not rebuild."""
    from agentdoc.agents import TurnMark
    from agentdoc.records import marks
    from agentdoc.turn.session import prepare_turn

    env = {"HOME": str(tmp_path / "home")}  # the store does not have the session (yet)
    parsed = document.parse(chat.read_text())
    lost = prepare_turn(chat, parsed, "second question", "run", Settings(), environ=env)
    assert lost.request.resume is None and lost.note == LOST_NOTE
    marks.set_mark(chat, parsed.turn_count(), TurnMark(OLD, "prompt-uuid"))
    plan = prepare_turn(chat, parsed, "second question", "run", Settings(), environ=env)
    assert plan.request.resume == OLD and plan.request.prompt.endswith("second question")
    assert plan.fallback is not None and plan.fallback.note == LOST_NOTE
