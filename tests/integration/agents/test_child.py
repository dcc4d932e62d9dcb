"""The child-process kit every agent process goes through (agents/base/child.py)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from agentdoc.agents.base.child import Child, StderrTail, child_env, group_gone, spawn
from agentdoc.agents.base.clearance import Clearance

SCRATCH = Clearance.scratch

# A stand-in agent: says it is ready, then waits for its input to end; how it answers SIGINT
# and SIGTERM is the test's to say (argv[1]: "exit" or "ignore").
AGENT = r"""
import signal, sys
mode = sys.argv[1]
handler = (lambda *_: sys.exit(7)) if mode == "exit" else signal.SIG_IGN
signal.signal(signal.SIGINT, handler)
signal.signal(signal.SIGTERM, signal.SIG_IGN if mode == "ignore" else signal.SIG_DFL)
print("ready", flush=True)
sys.stdin.read()
print("saw the end of input", file=sys.stderr, flush=True)
sys.exit(3)
"""


@contextlib.contextmanager
def _started(tmp_path: Path, mode: str) -> Iterator[Child]:
    with spawn(
        [sys.executable, "-c", AGENT, mode],
        tmp_path,
        child_env(os.environ),
        clearance=SCRATCH(tmp_path),
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"  # its signal handlers are in place
        yield Child(proc, "interrupt" if mode == "exit" else "end_of_input", "stand-in")


def test_an_interrupt_first_stop_sends_sigint(tmp_path: Path) -> None:
    with _started(tmp_path, "exit") as child:
        child.stop(grace=10.0)
        assert child.wait(0) == 7  # its SIGINT handler ran: the first step was SIGINT


def test_an_end_of_input_first_stop_closes_stdin(tmp_path: Path) -> None:
    with _started(tmp_path, "ignore") as child:
        child.stop(grace=10.0)
        assert child.wait(0) == 3
        assert child.proc.stderr is not None
        assert b"saw the end of input" in child.proc.stderr.read()


def test_a_child_that_ignores_the_polite_steps_is_killed(tmp_path: Path) -> None:
    with _started(tmp_path, "ignore") as child:
        child.first = "interrupt"  # SIGINT and SIGTERM are ignored: only SIGKILL ends it
        child.stop(grace=0.2)
        assert child.wait(0) == -9


def test_writes_go_to_stdin_until_it_is_gone(tmp_path: Path) -> None:
    # Its exit code says how long the line it read was.
    measure = "import sys; sys.exit(len(sys.stdin.readline()))"
    with spawn(
        [sys.executable, "-c", measure], tmp_path, os.environ, clearance=SCRATCH(tmp_path)
    ) as proc:
        child = Child(proc, "end_of_input")
        assert child.write(b"hello\n")
        assert child.wait(10.0) == 6
        child.close_input()
        assert not child.write(b"more\n")


def test_the_sweep_stops_what_the_child_left_in_its_group(tmp_path: Path) -> None:
    leaves = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])"
    )
    with spawn(
        [sys.executable, "-c", leaves], tmp_path, os.environ, clearance=SCRATCH(tmp_path)
    ) as proc:
        child = Child(proc, "end_of_input")
        assert child.wait(10.0) == 0
        assert not group_gone(proc.pid, 0.0)  # the grandchild still runs in the group
        child.sweep(grace=5.0)
        assert group_gone(proc.pid, 5.0)


def test_a_sweep_returns_once_the_group_is_gone_even_without_grace(tmp_path: Path) -> None:
    """A stop that returns while a killed helper is still dying lets the daemon exit before
    its agents do. The helper here ignores SIGTERM and holds 200 MB, so the kernel takes
    milliseconds to tear it down after SIGKILL."""
    heavy = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "held = b'x' * (200 << 20); print('ready', flush=True); time.sleep(60)"
    )
    leaves = (
        "import subprocess, sys; "
        f"p = subprocess.Popen([sys.executable, '-c', {heavy!r}], stdout=subprocess.PIPE); "
        "p.stdout.readline()"
    )
    with spawn(
        [sys.executable, "-c", leaves], tmp_path, os.environ, clearance=SCRATCH(tmp_path)
    ) as proc:
        child = Child(proc, "end_of_input")
        assert child.wait(30.0) == 0  # its helper is ready and left behind
        child.sweep(grace=0.0)
        assert group_gone(proc.pid, 0.0)


def test_the_stderr_tail_keeps_the_last_bytes_and_counts_all() -> None:
    tail = StderrTail(limit=10)
    tail.add(b"first line\n")
    offset = tail.total
    tail.add(b"second\n")
    tail.add(b"third\n")
    assert tail.total == 24
    assert tail.since(offset) == "second\nthird\n"
    assert tail.since().endswith("third\n") and "first" not in tail.since()


def test_the_child_environment_adds_the_entry_to_the_base() -> None:
    assert child_env({"A": "1", "B": "2"}, {"B": "3"}) == {"A": "1", "B": "3"}
