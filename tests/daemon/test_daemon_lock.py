"""The tree lock after a crash: a lock the dead daemon's child still holds for a moment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.daemon import lock
from agentdoc.errors import AgentdocError

# A process that holds the lock file the way a dead daemon's forked child does: it keeps the
# same flock until it is told to go (stdin closed) or, with an argument, for that many seconds.
HOLDER = """
import fcntl, sys, time
f = open(sys.argv[1], "a+")
fcntl.flock(f, fcntl.LOCK_EX)
print("held", flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))
else:
    sys.stdin.read()
"""


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[Path, list[subprocess.Popen[str]]]]:
    folder = tmp_path / "docs"
    (folder / ".agentdoc").mkdir(parents=True)
    lock_file = folder / ".agentdoc" / lock.LOCK_NAME
    lock_file.write_text(json.dumps({"pid": dead_pid(), "roots": [str(folder)]}))
    holders: list[subprocess.Popen[str]] = []
    yield folder, holders
    for proc in holders:
        proc.kill()
        proc.wait()
        if proc.stdin:
            proc.stdin.close()
        if proc.stdout:
            proc.stdout.close()


def hold(folder: Path, holders: list[subprocess.Popen[str]], *seconds: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder / ".agentdoc" / lock.LOCK_NAME), *seconds],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    holders.append(proc)
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"


@pytest.mark.serial
def test_a_lock_left_by_a_dead_daemon_is_taken_once_its_last_child_lets_go(
    held: tuple[Path, list[subprocess.Popen[str]]],
) -> None:
    folder, holders = held
    hold(folder, holders, "0.5")
    started = time.monotonic()
    tree = lock.TreeLock([folder])
    tree.acquire()
    try:
        assert time.monotonic() - started < lock.LOCK_GRACE
        holder = lock.find_daemon(folder)
        assert holder is not None and holder.pid == os.getpid()
    finally:
        tree.release()


def test_a_lock_held_on_after_its_daemon_died_is_named_for_what_it_is(
    held: tuple[Path, list[subprocess.Popen[str]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, holders = held
    monkeypatch.setattr(lock, "LOCK_GRACE", 0.3)
    hold(folder, holders)
    with pytest.raises(AgentdocError, match="has ended, but a process it started still holds"):
        lock.TreeLock([folder]).acquire()
