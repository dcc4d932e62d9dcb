"""Getting a document's CLI warm before its prompt: the hints, the pool's prewarm, the daemon.

The CLI is the stand-in of test_warm.py (it speaks the stdin protocol and answers `echo …`),
started through a `claude` wrapper script as the daemon would start the real one.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.agents import END, AgentRequest, AgentTurn
from agentdoc.config import Settings
from agentdoc.daemon import hints as hints_module
from agentdoc.daemon.bulk import awaits_prompt
from agentdoc.daemon.gate import gate_for
from agentdoc.daemon.hints import Ahead, Hints, next_request
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.service import Daemon
from agentdoc.document import note_own_open, parse
from tests.support import daemon as daemon_support
from tests.support.clearance import leave_for
from tests.support.waiting import wait_for
from tests.support.warm_cli import CONVERSATION, SESSION, STAND_IN, stand_in_settings

LONG_AGO = 1_000_000_000  # an mtime in 2001: not "used shortly before start-up"


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN.replace('"s-1"', f'"{SESSION}"'))
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    exe.chmod(0o755)
    return exe


def ahead_of(found: Settings) -> Ahead:
    """The daemon's gate's leave ahead of a prompt, with these settings."""
    return gate_for(found, None, None).ahead


ENV = {"PATH": os.environ.get("PATH", "")}  # no HOME: the CLI's session store is unknown


def document(folder: Path, name: str, text: str = CONVERSATION, *, old: bool = True) -> Path:
    path = folder / name
    path.write_text(text)
    if old:
        os.utime(path, (LONG_AGO, LONG_AGO))
    return path


# -- pure parts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        ("", True),  # the fresh heading a closed reply leaves
        ("<!-- a comment is not a prompt -->\n", True),
        ("what next?\n", False),  # a prompt: the save sends it, no hint needed
    ],
)
def test_awaits_prompt(tail: str, expected: bool) -> None:
    assert awaits_prompt(parse(CONVERSATION + tail)) is expected


def test_awaits_prompt_is_false_after_a_reply() -> None:
    text = CONVERSATION.removesuffix("## User\n\n")
    assert not awaits_prompt(parse(text))


def test_next_request_resumes_the_documents_session(folder: Path, claude: Path) -> None:
    found = stand_in_settings(claude)
    request = next_request(folder / "chat.md", CONVERSATION, found, ENV, ahead_of(found))
    assert request is not None
    assert (request.resume, request.turn, request.session_id) == (SESSION, 2, None)


@pytest.mark.parametrize(
    "text",
    [
        "# Just notes\n\n## User\n\nhi\n",  # not a session document
        CONVERSATION + "## Assistant\n\n<!-- agentdoc:reply 0a1b2c3d (streaming; text you "
        "type between these markers is kept) -->\n<!-- agentdoc:end 0a1b2c3d -->\n",
    ],
    ids=["plain note", "reply still open"],
)
def test_next_request_is_none_when_there_is_no_turn_to_prepare(
    folder: Path, claude: Path, text: str
) -> None:
    found = stand_in_settings(claude)
    assert next_request(folder / "chat.md", text, found, ENV, ahead_of(found)) is None


# -- the pool ---------------------------------------------------------------------------------


def run_turn(turn: AgentTurn) -> list[object]:
    """The events of one turn, to its end; the process stays up for the next."""
    events: list[object] = []
    while (event := turn.next_event(10)) is not END and event is not None:
        events.append(event)
    turn.close(5)
    return events


@pytest.fixture
def pool() -> Iterator[WarmPool]:
    made = WarmPool(capacity=2, idle_timeout=600)
    yield made
    made.close_all()


def resume(folder: Path, prompt: str = "") -> AgentRequest:
    return AgentRequest(prompt, folder, resume=SESSION, turn=2, clearance=leave_for(folder))


def test_a_prewarmed_process_runs_the_next_turn(pool: WarmPool, folder: Path, claude: Path) -> None:
    doc = folder / "chat.md"
    assert pool.prewarm(doc, resume(folder), stand_in_settings(claude), ENV)
    warmed = pool.pids()
    turn = pool.begin(doc, resume(folder, "again"), stand_in_settings(claude), ENV)
    assert "echo again" in [getattr(event, "text", None) for event in run_turn(turn)]
    assert turn.pid in warmed and pool.started == 1


def test_no_process_ahead_of_a_fork(pool: WarmPool, folder: Path, claude: Path) -> None:
    fork = AgentRequest(
        "",
        Path("."),
        resume=SESSION,
        fork=True,
        session_id="fork",
        turn=2,
        clearance=leave_for(Path(".")),
    )
    assert not pool.prewarm(folder / "chat.md", fork, stand_in_settings(claude), ENV)
    assert pool.started == 0


def test_a_new_sessions_first_turn_runs_in_the_process_started_ahead(
    pool: WarmPool, folder: Path, claude: Path
) -> None:
    doc, config = folder / "chat.md", stand_in_settings(claude)
    ahead = AgentRequest(
        "", folder, session_id="drawn-at-the-open", turn=1, clearance=leave_for(folder)
    )
    assert pool.prewarm(doc, ahead, config, ENV)
    warmed = pool.pids()
    # The turn's own plan drew another id; the process started ahead takes the turn anyway.
    first = AgentRequest(
        "hello", folder, session_id="drawn-at-the-save", turn=1, clearance=leave_for(folder)
    )
    turn = pool.begin(doc, first, config, ENV)
    assert "echo hello" in [getattr(event, "text", None) for event in run_turn(turn)]
    assert turn.pid in warmed and pool.started == 1


def test_a_process_for_another_agent_setting_is_replaced_ahead(
    pool: WarmPool, folder: Path, claude: Path
) -> None:
    doc = folder / "chat.md"
    run_turn(pool.begin(doc, resume(folder, "hi"), stand_in_settings(claude), ENV))
    before = pool.pids()
    # The document now names another model: its next turn needs another CLI.
    switched = dataclasses.replace(resume(folder), model="opus")
    assert pool.prewarm(doc, switched, stand_in_settings(claude), ENV)
    assert pool.started == 2 and pool.pids() != before
    assert not pool.prewarm(
        doc, switched, stand_in_settings(claude), ENV
    )  # it has the right one now


def test_a_hint_never_replaces_nor_evicts_an_unused_process(
    pool: WarmPool, folder: Path, claude: Path
) -> None:
    config = stand_in_settings(claude)
    assert pool.prewarm(folder / "a.md", resume(folder), config, ENV)
    assert not pool.prewarm(folder / "a.md", resume(folder), config, ENV)  # has one
    assert pool.prewarm(folder / "b.md", resume(folder), config, ENV)
    assert not pool.prewarm(folder / "c.md", resume(folder), config, ENV)  # full of unused
    assert pool.started == 2


def test_a_hint_takes_the_place_of_the_least_recently_used_process(
    pool: WarmPool, folder: Path, claude: Path
) -> None:
    config = stand_in_settings(claude)
    for name in ("a.md", "b.md"):  # two documents that ran a turn, "a" the longer ago
        run_turn(pool.begin(folder / name, resume(folder, "hi"), config, ENV))
    assert pool.prewarm(folder / "c.md", resume(folder), config, ENV)
    assert sorted(pool._procs) == [folder / "b.md", folder / "c.md"]


def test_an_unused_prewarmed_process_goes_idle(pool: WarmPool, folder: Path, claude: Path) -> None:
    assert pool.prewarm(folder / "a.md", resume(folder), stand_in_settings(claude), ENV)
    pool.close_idle(now=float("inf"))
    assert pool.pids() == []


# -- the daemon -------------------------------------------------------------------------------


def running(daemon: Daemon) -> daemon_support.Running:
    """The daemon, once its first walk is done: every document known, so an open is a hint."""
    return daemon_support.Running(daemon, discovered=True)


def warm_docs(daemon: Daemon) -> int:
    return daemon.hints.warmed


def test_an_editor_opening_a_document_warms_its_cli(folder: Path, claude: Path) -> None:
    doc = document(folder, "chat.md")
    with running(Daemon([folder], stand_in_settings(claude), environ=ENV)) as daemon:
        assert daemon.pool is not None
        doc.read_text()  # an editor loading the file
        wait_for(lambda: warm_docs(daemon) == 1, what="the CLI started on the open")
        doc.write_text(doc.read_text() + "and now?\n")
        wait_for(lambda: "echo and now?" in doc.read_text(), what="the reply")
        assert daemon.pool.started == 1  # the turn ran in the process the open started


def test_our_own_reads_warm_nothing(folder: Path, claude: Path) -> None:
    quiet = document(folder, "quiet.md")  # read by the daemon at start-up, by nobody else
    other = document(folder, "other.md")
    with running(Daemon([folder], stand_in_settings(claude), environ=ENV)) as daemon:
        other.read_text()
        # Events arrive in order: once the later open is handled, the earlier reads were.
        wait_for(lambda: warm_docs(daemon) == 1, what="the CLI of the opened document")
        assert daemon.pool is not None and daemon.pool.started == 1
    assert quiet.read_text() == CONVERSATION


def test_a_save_leaving_an_empty_user_heading_warms_the_cli(folder: Path, claude: Path) -> None:
    done = CONVERSATION.removesuffix("## User\n\n")
    doc = document(folder, "chat.md", done)
    with running(Daemon([folder], stand_in_settings(claude), environ=ENV)) as daemon:
        # The open of this write is itself a hint; an editor opened the file long ago, so
        # only the save is left to tell that a prompt is coming.
        note_own_open(doc)
        with doc.open("a") as handle:
            handle.write("## User\n\n")
        wait_for(lambda: warm_docs(daemon) == 1, what="the CLI started on the save")
        assert daemon.hints.reasons == ["a `## User` heading waits for its prompt"]


def test_opening_a_plain_note_reads_nothing(folder: Path, claude: Path) -> None:
    note = document(folder, "note.md", "# Just notes\n")
    doc = document(folder, "chat.md")
    daemon = Daemon([folder], stand_in_settings(claude), environ=ENV)
    hinted: list[Path] = []
    real_hint = daemon.hints.hint

    def hint(path: Path, why: str, text: str | None = None) -> None:
        hinted.append(path)
        real_hint(path, why, text)

    daemon.hints.hint = hint  # type: ignore[method-assign]
    with running(daemon):
        note.read_text()  # a search through the tree, say
        doc.read_text()
        wait_for(lambda: warm_docs(daemon) == 1, what="the conversation's CLI")
    assert note.resolve() not in hinted and doc.resolve() in hinted


def test_documents_used_just_before_start_up_are_warmed(folder: Path, claude: Path) -> None:
    for name in ("a.md", "b.md", "c.md"):
        document(folder, name, old=False)
    document(folder, "old.md")
    with running(Daemon([folder], stand_in_settings(claude), environ=ENV)) as daemon:
        # As many as may be warm at once (warm_sessions = 2), the most recent first.
        wait_for(lambda: warm_docs(daemon) == 2, what="two CLIs started at start-up")
        assert daemon.pool is not None and daemon.pool.started == 2


def test_a_hint_plans_again_only_when_the_frontmatter_changed(
    folder: Path, claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = WarmPool(capacity=2, idle_timeout=600)
    hints = Hints(pool, stand_in_settings(claude), ENV, ahead_of(stand_in_settings(claude)))
    planned: list[str] = []
    real = hints_module.next_request

    def counting(path: Path, text: str, *args: object) -> AgentRequest | None:
        planned.append(text)
        return real(path, text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(hints_module, "next_request", counting)
    doc = document(folder, "chat.md")
    try:
        for _ in range(2):  # e.g. the end of each turn: the same agent, model and session
            hints._warm(doc, "a turn ended", CONVERSATION)
        assert len(planned) == 1 and pool.started == 1
        opus = CONVERSATION.replace("agentdoc: {", "agentdoc: {model: opus, ")
        hints._warm(doc, "the model changed", opus)
        assert len(planned) == 2 and pool.started == 2
    finally:
        hints.close()
        pool.close_all()
