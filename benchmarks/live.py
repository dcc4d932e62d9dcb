"""Benchmarks with real processes and threads: a whole turn, and a daemon's save-to-turn latency.

Both use the replaying fake `claude` of the test suite (tests/support/scripts/fake_claude.py),
started through a small shell wrapper that first appends a line to a call log. The wrapper's log
line is the earliest moment a turn is observably under way, earlier than anything the fake itself
writes (which must first start Python and read its stdin).
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from measure import CheckFailed, Row, alternate, format_seconds, wait_until

from agentdoc.config import Settings
from agentdoc.daemon import own_command
from agentdoc.daemon.events import Stop
from agentdoc.daemon.service import Daemon
from agentdoc.turn.outcome import Progress
from agentdoc.turn.runner import TurnRunner

REPO = Path(__file__).resolve().parent.parent
FAKE = REPO / "tests" / "support" / "scripts" / "fake_claude.py"
TRANSCRIPT = REPO / "tests" / "fixtures" / "transcripts" / "plain_text.ndjson"
EXPECTED = "Hello! This is a plain reply from the mock."
PROMPT = "hi there"
DOC = "---\nagentdoc: {}\n---\n\n# Benchmark\n\n## User\n\n"

SETTLE_STEP = 0.1
SETTLE_MAX = 1.0
POLL = 0.005  # how often the call log is looked at: the resolution of the latency figure
TIMEOUT = 30.0
WARMUP = 1
_ENDED = frozenset({"done", "failed", "interrupted", "cancelled"})


@dataclass(frozen=True)
class FakeClaude:
    executable: Path
    calls: Path
    env: dict[str, str]

    def settings(self, **overrides: float) -> Settings:
        # The replaying fake is one-shot (it reads stdin to its end): no warm sessions.
        return Settings.model_validate(
            {"claude": str(self.executable), "warm_sessions": 0, **overrides}
        )

    def call_count(self) -> int:
        try:
            return self.calls.read_bytes().count(b"\n")
        except FileNotFoundError:
            return 0


def install_fake(folder: Path) -> FakeClaude:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "claude"
    calls = folder / "calls.log"
    exe.write_text(
        "#!/bin/sh\n"
        f"echo >> {shlex.quote(str(calls))}\n"
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} "$@"\n'
    )
    exe.chmod(0o755)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "FAKE_CLAUDE_TRANSCRIPT": str(TRANSCRIPT),
    }
    return FakeClaude(exe, calls, env)


# --- 4. turn overhead ----------------------------------------------------------------------


class _Turns:
    """Fresh documents for one-shot turns, one folder each so no turn sees another's state.

    They are all written up front so that only `TurnRunner.run()` is inside the timing.
    """

    def __init__(self, folder: Path, fake: FakeClaude, count: int) -> None:
        self.fake = fake
        self.pending = [folder / f"turn-{n}" / "chat.md" for n in range(count)]
        for path in self.pending:
            path.parent.mkdir()
            path.write_text(DOC + PROMPT + "\n", encoding="utf-8")
        self.states: list[str] = []
        self.last: Path | None = None

    def run(self) -> None:
        path = self.pending.pop()
        settings = self.fake.settings()
        runner = TurnRunner(
            path, settings, clear=own_command(path, settings), environ=self.fake.env
        )
        self.states.append(runner.run().state)
        self.last = path


def _run_fake_alone(fake: FakeClaude) -> None:
    subprocess.run(
        [str(fake.executable), "-p", "--output-format", "stream-json", "--verbose"],
        input=PROMPT.encode(),
        env=fake.env,
        capture_output=True,
        check=True,
        timeout=TIMEOUT,
    )


def bench_turn(folder: Path, reps: int, check: bool) -> list[Row]:
    fake = install_fake(folder / "bin")
    turns = _Turns(folder, fake, reps + WARMUP)
    ours, base = alternate([turns.run, lambda: _run_fake_alone(fake)], reps, WARMUP)
    if check:
        _check_turns(turns)
    return [
        Row(
            "turn",
            "TurnRunner.run(), one-shot, plain_text transcript",
            tuple(ours),
            baseline="turn/fake",
            note=f"overhead {_excess(ours, base)}",
        ),
        Row("turn/fake", "the fake claude alone (subprocess, same transcript)", tuple(base)),
    ]


def _check_turns(turns: _Turns) -> None:
    if any(state != "done" for state in turns.states):
        raise CheckFailed(f"turn: turns ended as {sorted(set(turns.states))}, not all done")
    if turns.last is None or EXPECTED not in turns.last.read_text(encoding="utf-8"):
        raise CheckFailed("turn: the reply is missing from the document")


# --- 5. save -> turn start (daemon) ---------------------------------------------------------


@contextmanager
def running(daemon: Daemon) -> Iterator[Daemon]:
    stop = Stop()
    thread = threading.Thread(target=daemon.run, args=(stop,), name="bench-daemon", daemon=True)
    thread.start()
    try:
        if not daemon.ready.wait(TIMEOUT):
            raise CheckFailed("daemon: did not start")
        yield daemon
    finally:
        stop.set()
        thread.join(TIMEOUT)
    if thread.is_alive():
        raise CheckFailed("daemon: did not stop in time")


class _Ends:
    """Turn ends reported by the daemon's progress callback, waited on without sleeping."""

    def __init__(self) -> None:
        self.states: list[str] = []
        self._cond = threading.Condition()

    def __call__(self, progress: Progress) -> None:
        if progress.state in _ENDED:
            with self._cond:
                self.states.append(progress.state)
                self._cond.notify_all()

    def wait_for(self, count: int) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self.states) >= count, TIMEOUT):
                raise CheckFailed(f"daemon: turn {count} did not end")


def _save_and_time(doc: Path, fake: FakeClaude, prompt: str) -> float:
    """Seconds from a save of `prompt` until the fake claude is started."""
    calls = fake.call_count()
    text = doc.read_text(encoding="utf-8") + prompt + "\n"
    start = time.perf_counter()
    doc.write_text(text, encoding="utf-8")
    wait_until(lambda: fake.call_count() > calls, TIMEOUT, POLL, "the turn to start")
    return time.perf_counter() - start


def bench_daemon(folder: Path, saves: int, check: bool) -> list[Row]:
    fake = install_fake(folder / "bin")
    docs = folder / "docs"
    docs.mkdir()
    # The watcher reports documents by their resolved folder; the daemon keys its state so.
    doc = docs.resolve() / "chat.md"
    doc.write_text(DOC, encoding="utf-8")
    ends = _Ends()
    settings = fake.settings(settle_step=SETTLE_STEP, settle_max=SETTLE_MAX)
    daemon = Daemon([docs], settings, environ=fake.env, on_progress=ends)
    latencies: list[float] = []
    with running(daemon):
        for index in range(saves):
            # Untimed: a person reads the reply before saving again, and a save right after
            # the daemon's own last write would settle as a burst, by quiet.
            time.sleep(SETTLE_STEP)
            latencies.append(_save_and_time(doc, fake, f"prompt {index}"))
            ends.wait_for(index + 1)
            wait_until(lambda: _idle(daemon, doc), TIMEOUT, POLL, "the daemon to see the end")
    if check:
        _check_daemon(ends, fake, saves)
    return [
        Row(
            "save→turn",
            f"daemon: save to fake claude started, {saves} saves",
            tuple(latencies),
            baseline="guard",
            note=f"excess over the guard {_excess(latencies, [settings.settle_guard])}",
        ),
        Row(
            "guard",
            "the configured settle_guard (the wait after a completed save)",
            (settings.settle_guard,),
            note="a constant, not measured",
        ),
    ]


def _idle(daemon: Daemon, doc: Path) -> bool:
    """Whether the daemon has taken note that the document's turn ended.

    Nothing public tells. Until then a save is not settled but picked up at once by the
    daemon's end-of-turn recheck, a different (and much shorter) path than the one measured.
    """
    state = daemon._docs.get(doc)
    return state is None or state.thread is None


def _check_daemon(ends: _Ends, fake: FakeClaude, saves: int) -> None:
    if fake.call_count() != saves:
        raise CheckFailed(f"daemon: {saves} saves started {fake.call_count()} turns")
    if any(state != "done" for state in ends.states):
        raise CheckFailed(f"daemon: turns ended as {sorted(set(ends.states))}, not all done")


def _excess(ours: list[float], base: list[float]) -> str:
    excess = statistics.median(ours) - statistics.median(base)
    return ("+" if excess >= 0 else "-") + format_seconds(abs(excess))
