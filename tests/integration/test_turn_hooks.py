"""The hooks around a turn: each step runs in the table's order, and one that raises is logged
while the turn, and the hooks after it, go on."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from agentdoc.config import Settings
from agentdoc.document import parser as document
from agentdoc.records import read_marks, read_snapshot
from agentdoc.turn import hooks
from agentdoc.turn.hooks import DEFAULT_HOOKS, Hook, ToolGate, TurnEnd, TurnHook, TurnStart
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nhi there\n"


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(DOC, encoding="utf-8")
    return path


def run(path: Path, fake: FakeClaude, hooks: tuple[type[TurnHook], ...]) -> str:
    runner = TurnRunner(path, fake.settings(), clear=own_leave, environ=fake.env, hooks=hooks)
    return runner.run().state


class Broken(Hook):
    """Fails at every step."""

    def before(self, start: TurnStart) -> None:
        raise RuntimeError("broken before")

    def settle(self) -> None:
        raise RuntimeError("broken settle")

    def after(self, end: TurnEnd) -> None:
        raise OSError("broken after")


def test_a_hook_that_raises_is_logged_and_never_fails_the_turn(
    doc: Path, fake_claude: Callable[..., FakeClaude], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="agentdoc.turn.hooks")
    state = run(doc, fake_claude("plain_text.ndjson"), (Broken, *DEFAULT_HOOKS))
    assert state == "done"
    parsed = document.parse(doc.read_text(encoding="utf-8"))
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    failed = [r.getMessage() for r in caplog.records if "Broken hook failed" in r.getMessage()]
    assert failed == [
        f"{doc}: the Broken hook failed (before the turn); the turn goes on",
        f"{doc}: the Broken hook failed (settle the turn); the turn goes on",
        f"{doc}: the Broken hook failed (after the turn); the turn goes on",
        f"{doc}: the Broken hook failed (settle the turn); the turn goes on",
    ]
    # The hooks after the broken one still ran: the transcript and the turn's mark are kept.
    snapshot = read_snapshot(doc)
    assert snapshot is not None and snapshot.turns == 1
    assert 1 in read_marks(doc)


calls: list[str] = []


class Recording(Hook):
    """Notes what each step sees."""

    def before(self, start: TurnStart) -> None:
        calls.append(f"before turn {start.plan.turn}, tools held: {not start.tools.is_set()}")

    def settle(self) -> None:
        calls.append("settle")

    def after(self, end: TurnEnd) -> None:
        final = end.final.turn_count() if end.final is not None else None
        calls.append(f"after turn {end.plan.turn}: complete={end.complete}, turns={final}")


def test_a_new_hook_is_one_class_and_one_row(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    calls.clear()
    assert run(doc, fake_claude("plain_text.ndjson"), (*DEFAULT_HOOKS, Recording)) == "done"
    assert calls == [
        "before turn 1, tools held: True",
        "settle",
        "after turn 1: complete=True, turns=1",
        "settle",
    ]


def test_no_after_step_for_a_prompt_that_got_no_reply(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    """A turn whose agent cannot start keeps its prompt pending: nothing to record."""
    calls.clear()
    fake = fake_claude("plain_text.ndjson")
    settings = fake.settings(claude=str(doc.parent / "missing-claude"))
    runner = TurnRunner(
        doc,
        settings,
        clear=own_leave,
        environ=fake.env,
        hooks=(Recording,),
        notice_start_failure=True,
    )
    assert runner.run().state == "failed"
    assert [c for c in calls if c.startswith("after")] == []


def test_the_tools_wait_for_every_hold_and_for_every_before_step() -> None:
    gate = ToolGate()
    first, second = gate.hold(), gate.hold()
    first()
    first()  # letting go twice counts once
    assert not gate.is_set()
    second()
    assert not gate.is_set()  # the `before` steps have not all run yet
    gate.open()
    assert gate.is_set()


def test_waiting_for_the_tools_asks_the_holders_to_start() -> None:
    gate = ToolGate()
    release = gate.hold()
    gate.open()
    started = threading.Event()

    def holder() -> None:
        gate.asked.wait()
        started.set()
        release()

    thread = threading.Thread(target=holder)
    thread.start()
    assert gate.wait(10.0)
    thread.join(10.0)
    assert started.is_set()


def test_an_agent_waiting_for_the_snapshot_never_waits_out_its_grace(
    doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot leaves an agent that was asked the machine for a moment (its git processes
    would compete with sending the request); an agent that waits for it (an ACP prompt, a
    one-shot CLI's stdin, a held tool) has it taken at once."""
    monkeypatch.setattr(hooks, "SNAPSHOT_GRACE", 3600.0)
    taken: list[int] = []
    monkeypatch.setattr(hooks, "snapshot_before", lambda _path, turn, *_args: taken.append(turn))
    gate = ToolGate()
    plan = SimpleNamespace(turn=3, request=SimpleNamespace(cwd=doc.parent))
    start = TurnStart(doc, Settings(), {}, plan, gate)  # type: ignore[arg-type]
    snapshots = hooks.FileSnapshots()
    snapshots.before(start)
    gate.open()
    gate.asked.set()  # the prompt went out
    assert gate.wait(30.0)  # then the agent waits for the gate
    snapshots.settle()
    assert taken == [3]
