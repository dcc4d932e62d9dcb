"""The long-lived CLI process, against a small stand-in that speaks the stdin protocol.

The stand-in answers each `user` line with an init, one text line and a result; it answers an
`interrupt` control request (or, with IGNORE_INTERRUPT, does not), and says whatever a test
writes to it. The real CLI is covered end to end in test_e2e_warm.py.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import END, AgentRequest, AgentTurn, Clearance, prepare_warm
from agentdoc.agents.base.events import BlockEnd
from agentdoc.agents.claude.warm import WarmProcess
from agentdoc.config import Settings
from agentdoc.daemon.pool import WarmPool
from agentdoc.errors import AgentCannotStart
from agentdoc.turn.hooks import ToolGate
from tests.support.clearance import leave_for
from tests.support.processes import alive
from tests.support.waiting import wait_for
from tests.support.warm_cli import STAND_IN


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    path = tmp_path / "stand_in.py"
    path.write_text(STAND_IN)
    return path


def start(stand_in: Path, **env: str) -> WarmProcess:
    return WarmProcess(
        [sys.executable, str(stand_in)],
        stand_in.parent,
        dict(env),
        Clearance.scratch(stand_in.parent),
    ).start()


def lines_of(turn: object) -> list[dict[str, object]]:
    found = []
    while (line := turn.next_line(10)) not in (b"", None):  # type: ignore[attr-defined]
        found.append(line if isinstance(line, dict) else json.loads(line))
    return found


def test_turns_end_at_their_result_and_share_the_process(stand_in: Path) -> None:
    proc = start(stand_in)
    try:
        first = proc.begin("one")
        assert [e["type"] for e in lines_of(first)] == ["system", "assistant", "result"]
        assert first.wait() == 0 and proc.session_id == "s-1" and not proc.busy
        second = proc.begin("two")
        assert lines_of(second)[1]["message"]["content"][0]["text"] == "echo two"  # type: ignore[index]
        assert second.wait() == 0 and proc.alive() and proc.turns == 2
    finally:
        proc.close()
    assert not proc.alive()


def test_a_turns_tools_wait_until_it_lets_them_run(stand_in: Path) -> None:
    """The CLI calls agentdoc's hook before every tool (registered when the process starts);
    the answer waits for the turn's `tools_after`, so what must happen first (the undo
    snapshot, running beside the request) is done before the first tool runs."""
    proc = start(stand_in)
    ran = stand_in.parent / "tool-ran"
    try:
        snapshot_done = threading.Event()
        turn = proc.begin("tool", tools_after=snapshot_done)
        init = turn.next_line(10)
        assert isinstance(init, dict) and init["subtype"] == "init"
        # The stand-in has asked (it asks right after the init) and waits for the answer.
        assert turn.next_line(0.3) is None and not ran.exists()
        snapshot_done.set()
        assert lines_of(turn)[-1]["subtype"] == "success" and ran.exists()
        assert turn.wait() == 0
        # A turn with nothing to wait for: the hook is answered at once.
        ran.unlink()
        again = proc.begin("tool")
        assert lines_of(again)[-1]["subtype"] == "success" and ran.exists()
    finally:
        proc.close()


def test_a_turns_gate_is_waited_on_only_once_a_tool_waits(stand_in: Path) -> None:
    # Until then what the tools wait for (the undo snapshot) leaves the CLI the machine to send
    # its request: waiting on the gate is what tells it to start at once.
    proc = start(stand_in)
    try:
        quiet, tool = ToolGate(), ToolGate()
        first = proc.begin("one", tools_after=quiet)
        assert lines_of(first)[-1]["subtype"] == "success" and first.wait() == 0
        assert not quiet.waited.is_set()
        turn = proc.begin("tool", tools_after=tool)
        wait_for(tool.waited.is_set, what="the held tool's wait on the gate")
        tool.set()
        assert lines_of(turn)[-1]["subtype"] == "success"
    finally:
        proc.close()


def test_an_interrupt_ends_the_turn_and_keeps_the_process(stand_in: Path) -> None:
    proc = start(stand_in)
    try:
        turn = proc.begin("hang")
        init = turn.next_line(10)
        assert isinstance(init, dict) and init["subtype"] == "init"  # read into its object once
        turn.stop()
        assert [e["type"] for e in lines_of(turn)] == ["result"]
        assert turn.wait() == 0 and proc.alive()
        after = proc.begin("again")
        assert lines_of(after)[-1]["subtype"] == "success"
    finally:
        proc.close()


def test_a_process_that_ignores_the_interrupt_is_stopped(stand_in: Path) -> None:
    proc = start(stand_in, IGNORE_INTERRUPT="1")
    turn = proc.begin("hang")
    assert turn.next_line(10) is not None
    turn.stop(grace=0.5)
    assert turn.next_line(0) == b""
    assert turn.wait() != 0 and not proc.alive()
    assert proc.pid is not None and not alive(proc.pid)


def test_a_process_gone_before_the_turn_ends_it_at_once(stand_in: Path) -> None:
    proc = start(stand_in)
    proc.kill()
    turn = proc.begin("anyone there?")
    assert lines_of(turn) == [] and turn.wait() != 0


def test_the_pool_trims_to_its_limit_once_busy_processes_are_idle(
    stand_in: Path, tmp_path: Path
) -> None:
    exe = tmp_path / "claude"
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {stand_in} "$@"\n')
    exe.chmod(0o755)
    pool = WarmPool(capacity=1, idle_timeout=600)
    settings = Settings(claude=str(exe))
    try:
        turns = [
            pool.begin(
                tmp_path / name,
                AgentRequest("hi", tmp_path, turn=1, clearance=leave_for(tmp_path)),
                settings,
                {},
            )
            for name in ("a.md", "b.md")
        ]
        assert len(pool.pids()) == 2  # both busy: nothing to evict yet
        for turn in turns:
            while (event := turn.next_event(10)) is not END and event is not None:
                pass
            turn.close(5)
        first = turns[0].pid
        pool.close_idle()
        assert pool.pids() == [turns[1].pid]
        assert first is not None
        wait_for(lambda: not alive(first), "the least recently used process to close")
    finally:
        pool.close_all()


def said(turn: AgentTurn) -> list[str]:
    """The text a turn streamed, read to its end."""
    text, deadline = [], time.monotonic() + 20
    while (event := turn.next_event(1)) is not END:
        assert time.monotonic() < deadline, "the turn did not end"
        if isinstance(event, BlockEnd) and event.text:  # the stand-in does not stream
            text.append(event.text)
    turn.close(5)
    return text


@pytest.fixture
def stand_in_pool(
    stand_in: Path, tmp_path: Path
) -> Iterator[tuple[WarmPool, Callable[..., AgentTurn]]]:
    exe = tmp_path / "claude"
    # A line after each result, which the next turn reads first: not a word of that turn.
    exe.write_text(f'#!/bin/sh\nLIFECYCLE=1 exec {sys.executable} {stand_in} "$@"\n')
    exe.chmod(0o755)
    pool = WarmPool(capacity=2, idle_timeout=600)
    settings = Settings(claude=str(exe))

    def begin(prompt: str, turn: int) -> AgentTurn:
        request = AgentRequest(
            prompt,
            tmp_path,
            resume="s-1" if turn > 1 else None,
            turn=turn,
            clearance=leave_for(tmp_path),
        )
        return pool.begin(tmp_path / "a.md", request, settings, {})

    try:
        yield pool, begin
    finally:
        pool.close_all()


def test_a_warm_process_that_ends_a_turn_unheard_is_replaced_for_it(
    stand_in_pool: tuple[WarmPool, Callable[..., AgentTurn]],
) -> None:
    """A process that died between turns may still pass for alive when the next prompt is
    written to it; that turn ends with nothing said, and is begun again on a fresh process."""
    pool, begin = stand_in_pool
    assert said(begin("one", 1)) == ["echo one"]
    [first] = pool.pids()
    turn = begin("die-once", 2)
    assert said(turn) == ["echo die-once"]
    assert pool.started == 2 and turn.pid != first and pool.pids() == [turn.pid]
    assert not alive(first)


def test_a_fresh_process_that_ends_unheard_is_not_started_again(
    stand_in_pool: tuple[WarmPool, Callable[..., AgentTurn]],
) -> None:
    pool, begin = stand_in_pool
    assert said(begin("die-once", 1)) == []
    assert pool.started == 1


def test_a_warm_process_that_dies_after_it_spoke_is_not_started_again(
    stand_in_pool: tuple[WarmPool, Callable[..., AgentTurn]],
) -> None:
    """Once the agent said anything the prompt may have reached the model: never sent twice."""
    pool, begin = stand_in_pool
    assert said(begin("one", 1)) == ["echo one"]
    turn = begin("half", 2)
    wait_for(lambda: isinstance(turn.next_event(1), BlockEnd), "the first words of the reply")
    [pid] = pool.pids()
    os.killpg(pid, signal.SIGKILL)
    assert said(turn) == []
    assert pool.started == 1


def test_a_turn_whose_fresh_process_cannot_start_ends_as_the_old_one_left_it(
    stand_in_pool: tuple[WarmPool, Callable[..., AgentTurn]], monkeypatch: pytest.MonkeyPatch
) -> None:
    pool, begin = stand_in_pool
    assert said(begin("one", 1)) == ["echo one"]

    class Failing:
        def __init__(self, start: Any) -> None:
            self.key = start.key

        def start(self) -> Any:
            raise AgentCannotStart("the disk is full")

    def failing(*args: Any) -> Any:
        return Failing(prepare_warm(*args))

    monkeypatch.setattr("agentdoc.daemon.pool.prepare_warm", failing)
    turn = begin("die-once", 2)
    while (event := turn.next_event(10)) is not END:
        assert event is not None, "the turn did not end"
    end = turn.close(5)
    assert end is not None and end.interrupted and pool.started == 1
