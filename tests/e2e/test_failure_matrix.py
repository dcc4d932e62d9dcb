"""The failure matrix: every way a turn can fail, driven through the real Claude Code CLI.

Each row checks the same four things (PRODUCT.md §1 "Errors", §7 promises 1 and 7):
a specific message in the document's ``> [!WARNING]`` callout, the same message in the status
file (state ``error``), the turn's outcome, and that the user's text is untouched. Then a second
prompt, answered by a fresh script entry, must go through on the same document.

The CLI talks only to the offline API on 127.0.0.1 (`claude_env`); those rows are marked e2e.
Retries are cut to one (`Settings.max_retries`) so every row stays fast. Two rows the real CLI
cannot produce on demand (``error_max_turns`` and an exit without a ``result`` line) use the
replaying fake CLI, and the advice table of the callout is checked on its own at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import AgentRequest, Retrying
from agentdoc.agents.claude import CLAUDE
from agentdoc.agents.claude import process as claude
from agentdoc.agents.claude.process import ClaudeProcess
from agentdoc.agents.claude.turn import ClaudeTurn
from agentdoc.agents.claude.warm import AgentProcess, WarmTurn
from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.config import Settings
from agentdoc.daemon.pool import WarmPool
from agentdoc.document import parser as document
from agentdoc.document import render
from agentdoc.errors import AgentdocError, DocumentGone
from agentdoc.records import status
from agentdoc.turn.outcome import TurnOutcome
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env, require_claude
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude
from tests.support.paths import TRANSCRIPTS
from tests.support.processes import group_exists
from tests.support.waiting import wait_for

FRONTMATTER = "---\ntitle: Failure matrix  # mine\nagentdoc: {}\n---\n"
BODY = """
# Failure matrix

A note of mine that must survive every failure.

## User

<!-- scratch: keep this comment -->
What is a borrow?
"""
DOC = FRONTMATTER + BODY
RECOVERED = "Recovered: a borrow is a reference."
PARTIAL = "First attempt text that gets cut off right here"


def cold_start(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None
) -> ClaudeTurn:
    """A one-shot CLI turn, started through `claude.spawn` as looked up now (tests record it)."""
    return ClaudeTurn(claude.spawn(request, settings, environ))


@dataclass
class Harness:
    """One document, one offline API, and the CLI settings for a row."""

    doc: Path
    api: FakeMessagesAPI
    env: dict[str, str]
    settings: Settings
    # Warm mode: the daemon's long-lived CLI per document, instead of a process per turn.
    pool: WarmPool | None = None

    def run(self, settings: Settings | None = None, **env: str) -> TurnOutcome:
        launcher = self.pool.launcher(self.doc) if self.pool is not None else cold_start
        runner = TurnRunner(
            self.doc,
            settings or self.settings,
            clear=own_leave,
            environ={**self.env, **env},
            launcher=launcher,
        )
        return runner.run()

    def run_in_background(self) -> tuple[threading.Thread, list[TurnOutcome]]:
        outcomes: list[TurnOutcome] = []
        worker = threading.Thread(target=lambda: outcomes.append(self.run()), daemon=True)
        worker.start()
        return worker, outcomes

    def text(self) -> str:
        return self.doc.read_text(encoding="utf-8")


@pytest.fixture(params=["cold", "warm"])
def harness(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Harness]:
    doc = tmp_path / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    settings = Settings(claude=str(require_claude()), flush_interval=0.05, max_retries=1)
    pool = WarmPool() if request.param == "warm" else None
    with FakeMessagesAPI() as api:
        env = claude_env(api, tmp_path / "home")
        # Settings.max_retries must be what reaches the CLI, so the harness must not preset it.
        del env["CLAUDE_CODE_MAX_RETRIES"]
        try:
            yield Harness(doc, api, env, settings, pool)
        finally:
            if pool is not None:
                pool.close_all()


@pytest.fixture
def spawned(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[AgentProcess]:
    """Every CLI turn the test starts (a process, or a warm process's turn), to signal it."""
    started: list[AgentProcess] = []
    pool = harness.pool
    if pool is not None:
        begin = pool.begin

        def recording_begin(*args: Any, **kwargs: Any) -> ClaudeTurn:
            turn = begin(*args, **kwargs)
            assert isinstance(turn, ClaudeTurn)
            started.append(turn.process)
            return turn

        monkeypatch.setattr(pool, "begin", recording_begin)
        return started

    spawn = claude.spawn

    def recording_spawn(*args: Any, **kwargs: Any) -> ClaudeProcess:
        proc = spawn(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(claude, "spawn", recording_spawn)
    return started


def assert_cli_released(harness: Harness, proc: AgentProcess) -> None:
    """The stopped turn's CLI writes nothing more: a one-shot CLI and anything it started are
    gone; a warm one ended the turn and is idle (its pool stops it with the rest)."""
    assert proc.pid is not None
    if harness.pool is not None:
        assert isinstance(proc, WarmTurn) and not proc.process.busy
        harness.pool.close_all()
    wait_for(lambda: not group_exists(proc.pid), "the CLI's process group to end")  # type: ignore[arg-type]
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PROMPT = "What is a borrow?"
# How the CLI says it could not connect: Claude Code 2.1.197, then 2.1.330.
REFUSED_197 = "Unable to connect to API (ConnectionRefused)"
REFUSED_330 = "Connection refused — a firewall or proxy may be blocking it"


def reply_block(text: str, *, pending: bool = False) -> str:
    """The reply's block. With `pending` (a failure before any reply text) it is the failure
    notice, and the prompt above it is still the pending prompt."""
    parsed = document.parse(text)
    if pending:
        assert [t.role for t in parsed.turns] == ["user", "assistant"], text
        assert parsed.pending_prompt() == PROMPT
        assert parsed.unanswered() is not None
    else:
        assert [t.role for t in parsed.turns] == ["user", "assistant", "user"], text
        assert parsed.pending_prompt() is None
    return parsed.turns[1].content


def assert_user_text_kept(text: str) -> None:
    assert "title: Failure matrix  # mine" in text
    body = text.split("---\n", 2)[2]
    assert body.startswith(BODY), body


def assert_failed(h: Harness, outcome: TurnOutcome, *messages: str) -> str:
    """The row's checks for a failed turn; returns the reply block for row-specific checks."""
    text = h.text()
    reply = reply_block(text, pending=not outcome.reply.text().strip())
    assert outcome.state == "failed"
    assert outcome.reply.error is not None
    assert "> [!WARNING]" in reply and "**The reply failed:**" in reply
    shown = status.read_status(h.doc)
    assert shown is not None and shown.state == "error" and shown.error is not None
    for message in messages:
        assert message in reply, (message, reply)
        assert message in " ".join(outcome.reply.error.split()), (message, outcome.reply.error)
    first = messages[0] if messages else ""
    assert first in shown.error
    assert "agentdoc:reply" not in text, "the streaming markers were left behind"
    assert_user_text_kept(text)
    return reply


def assert_next_prompt_works(h: Harness, settings: Settings | None = None) -> None:
    """The next run goes through: it sends the failed prompt again if the failure left it
    pending (no retyping), else the new prompt the user writes under the fresh heading."""
    retry = document.parse(h.text()).pending_prompt() == PROMPT
    if not retry:
        with h.doc.open("a", encoding="utf-8") as f:
            f.write("Try again, please.\n")
    sent_before = len(h.api.requests)
    h.api.add([{"type": "text", "text": RECOVERED}])
    outcome = h.run(settings)
    assert outcome.state == "done", outcome.reply.error
    parsed = document.parse(h.text())
    exchanges = 1 if retry else 2
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * exchanges + ["user"]
    answer = parsed.turns[2 * exchanges - 1].content
    assert RECOVERED in answer
    assert "[!WARNING]" not in answer and "agentdoc:unanswered" not in h.text()
    if retry:
        sent = [t for r in h.api.requests[sent_before:] for t in r.user_texts()]
        assert any(PROMPT in t for t in sent), "the pending prompt was not sent again"
    shown = status.read_status(h.doc)
    assert shown is not None and shown.state == "idle" and shown.error is None
    assert_user_text_kept(h.text())


# --- the CLI cannot start ------------------------------------------------------------------


def assert_refused(h: Harness, settings: Settings, *messages: str) -> None:
    """A problem found before anything is sent: an error to fix, the document untouched."""
    before = h.doc.read_bytes()
    with pytest.raises(AgentdocError) as raised:
        h.run(settings)
    for message in messages:
        assert message in str(raised.value), (message, str(raised.value))
    assert h.doc.read_bytes() == before, "the document must stay byte for byte as it was"
    assert h.api.requests == []
    shown = status.read_status(h.doc)
    assert shown is not None and shown.state == "error" and shown.pid is None


@pytest.mark.e2e
def test_missing_claude(harness: Harness, tmp_path: Path) -> None:
    missing = harness.settings.model_copy(update={"claude": str(tmp_path / "no-such-claude")})
    assert_refused(harness, missing, "cannot find the Claude Code CLI", "AGENTDOC_CLAUDE")
    assert_next_prompt_works(harness)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("content", "mode", "messages"),
    [
        pytest.param(
            "#!/bin/sh\nexit 0\n", 0o644, ("is not executable", "chmod +x"), id="no-x-bit"
        ),
        pytest.param(
            "just some text\n", 0o755, ("cannot run", "Exec format error"), id="no-program"
        ),
    ],
)
def test_claude_that_cannot_be_run(
    harness: Harness, tmp_path: Path, content: str, mode: int, messages: tuple[str, ...]
) -> None:
    exe = tmp_path / "claude"
    exe.write_text(content)
    exe.chmod(mode)
    broken = harness.settings.model_copy(update={"claude": str(exe)})
    assert_refused(harness, broken, *messages)
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_a_value_the_os_cannot_pass_is_refused_before_sending(harness: Harness) -> None:
    # YAML's "\0" escape puts a NUL into a value without a NUL byte in the file; argv cannot
    # carry it: the user must fix the document, and nothing is written into it.
    harness.doc.write_text(DOC.replace("agentdoc: {}", 'agentdoc: {system: "be brief\\0"}'))
    assert_refused(harness, harness.settings, "--append-system-prompt", "NUL")


@pytest.mark.e2e
def test_a_cli_that_never_ran_leaves_no_session_behind(harness: Harness, tmp_path: Path) -> None:
    missing = harness.settings.model_copy(update={"claude": str(tmp_path / "no-such-claude")})
    with pytest.raises(AgentdocError):
        harness.run(missing)
    # A phantom id makes the next prompt "rebuild" a session that never existed.
    assert document.parse(harness.text()).meta.session is None


@pytest.mark.e2e
def test_cli_usage_error_shows_its_stderr(harness: Harness, tmp_path: Path) -> None:
    # A CLI that rejects our command line (say, a too-old version) fails before any request.
    wrapper = tmp_path / "claude-bogus"
    wrapper.write_text(f'#!/bin/sh\nexec "{require_claude()}" --bogus-flag "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    bogus = harness.settings.model_copy(update={"claude": str(wrapper)})
    outcome = harness.run(bogus)
    assert_failed(harness, outcome, "error: unknown option '--bogus-flag'")
    assert harness.api.requests == []
    assert_next_prompt_works(harness)


# --- HTTP errors before the stream ---------------------------------------------------------


@pytest.mark.e2e
def test_invalid_api_key_says_how_to_log_in(harness: Harness) -> None:
    harness.api.add({"status": 401, "times": 2})
    outcome = harness.run()
    reply = assert_failed(harness, outcome, "Invalid API key")
    assert "claude /login" in reply and "ANTHROPIC_API_KEY" in reply
    assert_next_prompt_works(harness)


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("entry", "messages", "notice"),
    [
        pytest.param(
            {"status": 429, "message": "Slow down, please", "retry_after": 1},
            ("Request rejected (429)", "Slow down, please"),
            "API error (429 rate_limit): retrying 1/1",
            id="429",
        ),
        pytest.param(
            {"status": 529},
            ("529", "Overloaded"),
            "API error (529 overloaded): retrying 1/1",
            id="529",
        ),
    ],
)
def test_retried_errors_show_a_live_notice_then_fail(
    harness: Harness, entry: dict[str, Any], messages: tuple[str, ...], notice: str
) -> None:
    harness.api.add({**entry, "times": 2})
    worker, outcomes = harness.run_in_background()
    # The notice lives only while the CLI waits to retry (about a second): poll for it.
    wait_for(lambda: notice in harness.text(), "the live retry notice in the document")
    worker.join(60)
    assert len(harness.api.requests) == 2  # the first try and exactly one retry
    reply = assert_failed(harness, outcomes[0], *messages)
    assert notice not in reply, "the retry notice must go when the turn ends"
    if entry["status"] == 429:
        assert "rate limiting you" in reply
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_server_error_after_retries(harness: Harness) -> None:
    harness.api.add({"status": 500, "times": 2})
    outcome = harness.run()
    assert_failed(harness, outcome, "API Error: 500 Internal server error")
    assert len(harness.api.requests) == 2
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_bad_request_fails_once_the_cli_gives_up(
    harness: Harness, spawned: list[AgentProcess]
) -> None:
    # Claude Code 2.1.197 sends a request that got a 400 once; 2.1.330 quietly tries a few
    # variants of it first. Either way agentdoc runs the CLI once and shows what it gave up with.
    harness.api.add({"status": 400, "message": "messages: roles must alternate", "times": "always"})
    outcome = harness.run()
    assert_failed(harness, outcome, "API Error: 400", "messages: roles must alternate")
    assert len(spawned) == 1 and harness.api.requests
    harness.api.clear()
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_bad_request_the_cli_retries_by_itself_is_answered(
    harness: Harness, spawned: list[AgentProcess]
) -> None:
    harness.api.add({"status": 400, "message": "messages: roles must alternate"})
    harness.api.add([{"type": "text", "text": RECOVERED}])
    outcome = harness.run()
    assert len(spawned) == 1
    if len(harness.api.requests) == 1:  # the CLI took the 400 as final (2.1.197)
        assert_failed(harness, outcome, "API Error: 400", "messages: roles must alternate")
        harness.api.clear()
        assert_next_prompt_works(harness)
        return
    # The CLI's own retry got the answer (2.1.330): an ordinary reply, no trace of the 400.
    assert outcome.state == "done", outcome.reply.error
    text = harness.text()
    answer = reply_block(text)
    assert RECOVERED in answer and "[!WARNING]" not in answer and "400" not in answer
    shown = status.read_status(harness.doc)
    assert shown is not None and shown.state == "idle" and shown.error is None
    assert_user_text_kept(text)


@pytest.mark.e2e
def test_connection_refused(harness: Harness) -> None:
    outcome = harness.run(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{closed_port()}")
    error = " ".join((outcome.reply.error or "").split())
    # The CLI's own wording, which changed between releases; the callout shows it verbatim.
    said = next((m for m in (REFUSED_197, REFUSED_330) if m in error), REFUSED_197)
    reply = assert_failed(harness, outcome, said)
    assert "network" in reply
    assert harness.api.requests == []
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_session_the_cli_no_longer_has_is_rebuilt_from_the_document(harness: Harness) -> None:
    lost = "00000000-0000-4000-8000-000000000000"
    harness.doc.write_text(DOC.replace("agentdoc: {}", f"agentdoc: {{session: {lost}}}"))
    harness.api.add([{"type": "text", "text": RECOVERED}])
    outcome = harness.run()
    assert outcome.state == "done", outcome.reply.error
    text = harness.text()
    assert RECOVERED in reply_block(text) and "the previous one was not found" in text
    assert document.parse(text).meta.session not in (None, lost)
    assert_user_text_kept(text)


# --- failures in the middle of the stream ---------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("mode", ["disconnect", "sse_error"])
def test_midstream_failure_is_retried_and_the_abandoned_text_rolled_back(
    harness: Harness, mode: str
) -> None:
    final = "Second attempt: complete answer."
    broken: ScriptEntry = {
        "content": [{"type": "text", "text": PARTIAL}],
        "pause_after_deltas": 4,
        "fail": {"mode": mode, "after_deltas": 4},
    }
    harness.api.add(broken, [{"type": "text", "text": final}])
    worker, outcomes = harness.run_in_background()
    harness.api.wait_paused()
    # The abandoned attempt really reached the document before it failed ...
    wait_for(lambda: "First attempt text that " in harness.text(), "the partial text")
    harness.api.release()
    worker.join(60)
    (outcome,) = outcomes
    assert outcome.state == "done", outcome.reply.error
    text = harness.text()
    reply = reply_block(text)
    # ... and is gone now: the reply is the retry's, exactly once.
    assert "First attempt" not in text
    assert text.count(final) == 1 and reply.strip().startswith(final)
    assert "[!WARNING]" not in reply
    assert len(harness.api.requests) == 2
    shown = status.read_status(harness.doc)
    assert shown is not None and shown.state == "idle" and shown.error is None
    assert_user_text_kept(text)
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_stalled_stream_is_stopped_by_our_timer(
    harness: Harness, spawned: list[ClaudeProcess]
) -> None:
    harness.api.add(
        {
            "content": [{"type": "text", "text": f"{PARTIAL} and never more"}],
            "fail": {"mode": "hang", "after_deltas": 3, "seconds": 120},
        }
    )
    # The silence is timed from the turn's start, so the CLI's own start-up counts: on a
    # loaded machine that alone took over 2 s, and the turn stalled before its first words.
    # Ten seconds leave room for that among the parallel tests; the wait costs them nothing.
    stalled = harness.settings.model_copy(update={"stall_timeout": 10.0})
    started = time.monotonic()
    outcome = harness.run(stalled)
    # Far sooner than the CLI's own ~300 s idle watchdog.
    assert time.monotonic() - started < 40
    reply = assert_failed(harness, outcome, "no output from claude for 10 s", "stall timeout")
    assert "First attempt text " in reply, "the partial text must be kept"
    assert "partial" in reply
    (proc,) = spawned
    assert_cli_released(harness, proc)  # the CLI and anything it started are gone
    assert_next_prompt_works(harness)


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_cli_killed_by_a_signal_mid_stream(
    harness: Harness, spawned: list[ClaudeProcess], sig: signal.Signals
) -> None:
    harness.api.add({"content": [{"type": "text", "text": PARTIAL}], "pause_after_deltas": 4})
    worker, outcomes = harness.run_in_background()
    harness.api.wait_paused()
    wait_for(lambda: "First attempt text that " in harness.text(), "the partial text")
    (proc,) = spawned
    assert proc.pid is not None
    os.killpg(proc.pid, sig)  # the group of the CLI this test started, nothing else
    worker.join(60)
    harness.api.release()
    (outcome,) = outcomes
    assert outcome.state == "interrupted"
    text = harness.text()
    reply = reply_block(text)
    assert "First attempt text that " in reply
    assert "**The reply was interrupted**" in reply and "partial" in reply
    assert "agentdoc:reply" not in text
    assert_user_text_kept(text)
    assert_next_prompt_works(harness)


@pytest.mark.e2e
def test_cli_killed_by_a_signal_is_reported_in_the_status_file(
    harness: Harness, spawned: list[ClaudeProcess]
) -> None:
    harness.api.add({"content": [{"type": "text", "text": PARTIAL}], "pause_after_deltas": 4})
    worker, _outcomes = harness.run_in_background()
    harness.api.wait_paused()
    wait_for(lambda: bool(spawned), "the CLI to start")
    assert spawned[0].pid is not None
    os.killpg(spawned[0].pid, signal.SIGKILL)
    worker.join(60)
    harness.api.release()
    shown = status.read_status(harness.doc)
    assert shown is not None and shown.state == "error"
    assert shown.error is not None and "interrupted" in shown.error


# --- outcomes only the fake CLI produces on demand -------------------------------------------


@pytest.fixture
def fake_harness(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> Callable[..., tuple[Harness, FakeClaude]]:
    def make(transcript: Path, **env: str) -> tuple[Harness, FakeClaude]:
        doc = tmp_path / "chat.md"
        doc.write_text(DOC, encoding="utf-8")
        fake = fake_claude(**env)
        fake.env["FAKE_CLAUDE_TRANSCRIPT"] = str(transcript)
        return Harness(doc, FakeMessagesAPI(), fake.env, fake.settings()), fake

    return make


def assert_next_prompt_works_with(h: Harness, fake: FakeClaude) -> None:
    with h.doc.open("a", encoding="utf-8") as f:
        f.write("Try again, please.\n")
    env = {**fake.env, "FAKE_CLAUDE_TRANSCRIPT": str(TRANSCRIPTS / "plain_text.ndjson")}
    env.pop("FAKE_CLAUDE_EXIT", None)
    env.pop("FAKE_CLAUDE_STDERR", None)
    outcome = TurnRunner(h.doc, h.settings, clear=own_leave, environ=env).run()
    assert outcome.state == "done", outcome.reply.error
    parsed = document.parse(h.text())
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    shown = status.read_status(h.doc)
    assert shown is not None and shown.state == "idle" and shown.error is None


def test_max_turns_reached(fake_harness: Callable[..., tuple[Harness, FakeClaude]]) -> None:
    h, fake = fake_harness(TRANSCRIPTS / "max_turns_1.ndjson", exit="1")
    outcome = h.run()
    assert_failed(h, outcome, "maximum number of turns")
    assert_next_prompt_works_with(h, fake)


@pytest.mark.parametrize(
    ("stderr", "message"),
    [
        ("fatal: out of memory\n", "fatal: out of memory"),
        ("", "claude exited with code 3 without a result"),
    ],
    ids=["with-stderr", "silent"],
)
def test_nonzero_exit_without_a_result_line(
    fake_harness: Callable[..., tuple[Harness, FakeClaude]],
    tmp_path: Path,
    stderr: str,
    message: str,
) -> None:
    # The CLI dies after streaming a few words: init, then the first deltas, no result.
    lines = (TRANSCRIPTS / "long_stream.ndjson").read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.ndjson"
    cut.write_bytes(b"".join(lines[:40]))
    h, fake = fake_harness(cut, exit="3", stderr=stderr)
    outcome = h.run()
    reply = assert_failed(h, outcome, message)
    assert "partial" in reply
    assert_next_prompt_works_with(h, fake)


def delete_mid_reply(harness: Harness) -> list[BaseException]:
    """Run a turn and delete its document while the reply streams; what the turn raised."""
    harness.api.add({"content": [{"type": "text", "text": PARTIAL}], "pause_after_deltas": 4})
    raised: list[BaseException] = []

    def run() -> None:
        try:
            harness.run()
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    harness.api.wait_paused()
    wait_for(lambda: "First attempt text that " in harness.text(), "the partial text")
    harness.doc.unlink()
    harness.api.release()
    worker.join(60)
    return raised


@pytest.mark.e2e
def test_document_deleted_mid_reply(harness: Harness, spawned: list[ClaudeProcess]) -> None:
    (error,) = delete_mid_reply(harness)
    assert isinstance(error, DocumentGone)
    assert "chat.md: the document no longer exists" in str(error)
    assert not harness.doc.exists(), "a deleted document must not be re-created"
    (proc,) = spawned
    assert_cli_released(harness, proc)  # nothing left to write the reply into


@pytest.mark.e2e
def test_document_deleted_mid_reply_clears_the_streaming_status(harness: Harness) -> None:
    delete_mid_reply(harness)
    shown = status.read_status(harness.doc)
    # Left as it is, the status says "streaming" (with our pid) forever.
    assert shown is None or (shown.state == "error" and shown.pid is None)


# --- the advice in the callout: Claude's error texts classified (pure) -----------------------


@pytest.mark.parametrize(
    ("error", "hint"),
    [
        ("Invalid API key · Fix external API key", "claude /login"),
        ("OAuth token has expired", "ANTHROPIC_API_KEY"),
        ("API Error: Request rejected (429) · Rate limited", "rate limiting you"),
        ("API Error: Unable to connect to API (ConnectionRefused)", "network"),
        ("API Error: Unable to connect to API (ECONNRESET)", "network"),
        (f"API Error: {REFUSED_330} (ECONNREFUSED)", "network"),
        (f"API Error: {REFUSED_330}", "network"),
        ("no output from claude for 120 s; the turn was stopped (stall timeout)", "stall_timeout"),
        ("Reached maximum number of turns (1)", "continue"),
        ("Prompt is too long", "agentdoc fork"),
        ("error: unknown option '--bogus-flag'", "claude --version"),
        ("API Error: 500 Internal server error. … try again in a moment.", None),
        ("API Error: Repeated 529 Overloaded errors. … Try again in a moment.", None),
        # A port number is not a status code.
        ("API Error: 500 Internal server error. (127.0.0.1:429)", None),
        ("API Error: 500 Internal server error. (127.0.0.1:401)", None),
        ("claude exited with code 3 without a result", None),
    ],
)
def test_claude_errors_are_classified_with_advice(error: str, hint: str | None) -> None:
    found = CLAUDE.classify(error)
    advice = None if found is None else found.advice
    if hint is None:
        assert advice is None
    else:
        assert advice is not None and hint in advice


@pytest.mark.parametrize(
    ("retry", "notice"),
    [
        (
            Retrying(
                attempt=1, max_retries=4, delay_ms=601.1, error_status=429, error="rate_limit"
            ),
            "*API error (429 rate_limit): retrying 1/4 in 0.6 s…*",
        ),
        (
            Retrying(attempt=2, max_retries=2, delay_ms=1076.6, error_status=None, error="unknown"),
            "*API error (no answer): retrying 2/2 in 1.1 s…*",
        ),
        (
            Retrying(
                attempt=9,
                max_retries=10,
                delay_ms=33_500,
                error_status=529,
                error="overloaded",
            ),
            "*API error (529 overloaded): retrying 9/10 in 34 s…*",
        ),
    ],
)
def test_live_retry_notice(retry: Retrying, notice: str) -> None:
    assert render.render_retry(retry) == notice
