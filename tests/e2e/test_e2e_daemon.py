"""`agentdoc watch` as a real process, running the real Claude Code CLI against the offline API.

Everything here goes through the user's entry points: a save of the document starts a turn,
`agentdoc status --json`, `agentdoc cancel` and `agentdoc stop` are separate processes. The
Messages API is a `FakeMessagesAPI` in this process; `pause_after_deltas` holds a reply half-way
so the test can look at (and type into) the document while the reply streams.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.daemon import lock
from agentdoc.document import parser as document
from agentdoc.records.status import read_status
from tests.support.claude_watch import TITLED_DOC, WORDS, paused, served
from tests.support.processes import (
    processes_with_env,
    roles,
    run_cli,
    state_of,
    status_json,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

SETTLE_MAX = 1.0
# Sequential turns, each save sent once; the latency is only printed (it is measured, alone on
# the machine, by the benchmarks' `d/…` rows).
LATENCY_TURNS = 10
CANCEL_WITHIN = 3.0  # seconds, for the whole `agentdoc cancel` command (its own start included)


# A prompt queued behind a reply that ends by itself, or is cancelled: a cancel is an end, and
# ends the streaming reply, not the prompt below it. (Behind a cancel with a warm CLI: the
# contract's test_cancel_ends_the_reply_and_the_prompt_queued_below_it_is_sent[claude].)
@pytest.mark.parametrize(
    ("warm_sessions", "end"),
    [(4, "released"), (0, "released"), (0, "cancelled")],
    ids=["warm", "cold", "cold-cancelled"],
)
def test_a_prompt_saved_while_a_reply_streams_is_queued_and_answered_after_it(
    tmp_path: Path, chat_folder: Path, warm_sessions: int, end: str
) -> None:
    doc = chat_folder / "chat.md"
    script = [paused(20), [{"type": "text", "text": "The second answer."}]]
    with served(tmp_path, chat_folder, script, warm_sessions=warm_sessions) as (api, env, daemon):
        doc.write_text(TITLED_DOC + "First question?\n")
        api.wait_paused()
        wait_for(lambda: "word19" in doc.read_text(), what="the partial reply in the file")
        partial = doc.read_text()
        assert "word30" not in partial and "agentdoc:reply" in partial

        report = status_json(chat_folder, env)
        assert report["daemon"]["pid"] == daemon.pid
        [entry] = report["documents"]
        assert (entry["document"], entry["state"], entry["turn"]) == ("chat.md", "streaming", 1)
        assert entry["pid"] == daemon.pid

        doc.write_text(partial + "\n## User\n\nSecond question?\n")
        with pytest.raises(TimeoutError):  # queued: nothing is sent while the first streams
            api.wait_for_requests(2, timeout=SETTLE_MAX + 1.0)
        wait_for(lambda: queued(doc), what="the second prompt queued")
        if end == "cancelled":
            cancelled = run_cli(["cancel", str(doc)], env)
            assert cancelled.returncode == 0, cancelled.stderr
        api.release()
        requests = api.wait_for_requests(2)
        wait_for(lambda: len(roles(doc)) == 5 and state_of(doc) == "idle", what="both replies")
        [entry] = status_json(chat_folder, env)["documents"]

    assert entry["state"] == "idle" and entry["turn"] == 2 and entry["pid"] is None
    parsed = document.parse(doc.read_text())
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    if end == "cancelled":
        assert "interrupted" in parsed.turns[1].content
        assert "word59" not in parsed.turns[1].content
    else:
        assert parsed.turns[1].content.count(WORDS) == 1
    assert parsed.turns[2].content.strip() == "Second question?"
    assert "The second answer." in parsed.turns[3].content
    # After a cancel the prompt may carry the interrupted reply before it.
    assert requests[0].user_texts()[-1] == "First question?"
    assert requests[1].user_texts()[-1].endswith("Second question?")
    assert len(api.requests) == 2


def queued(doc: Path) -> bool:
    found = read_status(doc)
    return found is not None and found.queued


@pytest.mark.serial
def test_cancel_stops_a_paused_reply_and_stop_ends_the_daemon(
    tmp_path: Path, chat_folder: Path, warm_sessions: int
) -> None:
    doc = chat_folder / "chat.md"
    script = [paused(10)]
    with served(tmp_path, chat_folder, script, warm_sessions=warm_sessions) as (api, env, daemon):
        doc.write_text(TITLED_DOC + "A long answer, please.\n")
        api.wait_paused()
        wait_for(lambda: "word9" in doc.read_text(), what="the partial reply in the file")
        wait_for(lambda: state_of(doc) == "streaming", what='status "streaming"')

        started = time.monotonic()
        cancelled = run_cli(["cancel", str(doc)], env)
        took = time.monotonic() - started
        print(f"\nagentdoc cancel on a paused stream: {took:.2f} s")
        assert cancelled.returncode == 0, cancelled.stderr
        assert took < CANCEL_WITHIN
        text = doc.read_text()
        assert "agentdoc:reply" not in text and state_of(doc) == "idle"

        stopped = run_cli(["stop", str(chat_folder)], env)
        assert stopped.returncode == 0, stopped.stderr
        assert daemon.wait(5) == 0
        log = daemon.log()

    assert "agentdoc stopped" in log
    assert lock.find_daemon(chat_folder) is None
    assert processes_with_env("HOME", env["HOME"]) == []  # no claude left behind
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    reply = parsed.turns[1].content
    assert "word9" in reply and "word59" not in reply and "interrupted" in reply
    assert len(api.requests) == 1


def test_save_to_turn_start_latency_over_sequential_turns(
    tmp_path: Path, chat_folder: Path, warm_sessions: int
) -> None:
    """Each save reaches the API as exactly one request; the latency is printed, not asserted."""
    doc = chat_folder / "chat.md"
    script: list[ScriptEntry] = [
        [{"type": "text", "text": f"Answer number {i}."}] for i in range(LATENCY_TURNS)
    ]
    latencies: list[float] = []
    opened: list[float] = []
    with served(tmp_path, chat_folder, script, warm_sessions=warm_sessions) as (api, env, _daemon):
        for i in range(LATENCY_TURNS):
            text = doc.read_text()
            assert text.endswith("## User\n\n"), text[-200:]

            def started(i: int = i) -> bool:
                return "agentdoc:reply" in doc.read_text() or len(api.requests) > i

            def answered(i: int = i) -> bool:
                return f"Answer number {i}." in doc.read_text() and state_of(doc) == "idle"

            saved = time.monotonic()
            doc.write_text(text + f"Question number {i}?\n")
            # The reply region opens just before the CLI starts: that part is agentdoc's own.
            wait_for(started, what=f"turn {i} to start")
            opened.append(time.monotonic() - saved)
            api.wait_for_requests(i + 1)
            latencies.append(time.monotonic() - saved)
            wait_for(answered, what=f"reply {i}")
        assert status_json(chat_folder, env)["documents"][0]["turn"] == LATENCY_TURNS

    print(f"\nover {LATENCY_TURNS} sequential turns (settle step 0.1 s, polled every 20 ms):")
    print(f"  save to API request (turn start): {summary(latencies)}")
    print(f"  save to reply region opened:      {summary(opened)}")
    prompts = [r.user_texts()[-1] for r in api.requests]
    assert prompts == [f"Question number {i}?" for i in range(LATENCY_TURNS)]
    text = doc.read_text()
    roles = [t.role for t in document.parse(text).turns]
    assert roles == ["user", "assistant"] * LATENCY_TURNS + ["user"]
    assert all(text.count(f"Answer number {i}.") == 1 for i in range(LATENCY_TURNS))


def summary(seconds: list[float]) -> str:
    return (
        f"median {statistics.median(seconds):.3f} s, "
        f"min {min(seconds):.3f} s, max {max(seconds):.3f} s"
    )
