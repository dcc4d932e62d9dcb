"""The suite's leak check: a test must not leave a thread or a child process running.

Threads are compared by identity before and after the test; a thread that is already on its
way out gets a short, bounded grace period (polled, not slept) before it counts as leaked.
Processes are found through /proc: the test process is made a child subreaper, so an agent
orphaned by a killed daemon is reparented to the test process instead of init and is caught too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
GRACE = 5.0  # seconds a finishing thread or process may take after the test's own clean-up


def become_subreaper() -> None:
    """Orphaned descendants are reparented to us, where the check can see them (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _stat_fields(pid: str) -> tuple[str, str, int] | None:
    """(command, state letter, parent pid) of `pid`, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command is in parentheses and may itself hold spaces or parentheses.
    head, _, tail = stat.rpartition(")")
    fields = tail.split()
    return head.partition("(")[2], fields[0], int(fields[1])


def child_processes() -> dict[int, tuple[str, bool]]:
    """Our direct children: pid -> (command, is a zombie)."""
    me = os.getpid()
    found: dict[int, tuple[str, bool]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(entry.name)
        if fields is not None and fields[2] == me:
            found[int(entry.name)] = (fields[0], fields[1] == "Z")
    return found


def _reap(pids: list[int]) -> None:
    """Collect exited orphans (ours only as their subreaper) so they do not pile up; a child
    a test still holds a Popen for copes (its wait then reports it as done)."""
    for pid in pids:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _describe_process(pid: int, command: str) -> str:
    try:
        argv = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        argv = ""
    return f"pid {pid} ({command}): {argv.strip()[:200]}"


def leaks_after(before_threads: set[threading.Thread], before_children: set[int]) -> list[str]:
    """What the test left behind, after a bounded wait for whatever is still finishing."""
    deadline = time.monotonic() + GRACE
    while True:
        threads = [t for t in threading.enumerate() if t not in before_threads and t.is_alive()]
        children = child_processes()
        _reap([pid for pid, (_, zombie) in children.items() if zombie])
        live = {
            pid: cmd
            for pid, (cmd, zombie) in children.items()
            if not zombie and pid not in before_children
        }
        if (not threads and not live) or time.monotonic() > deadline:
            break
        time.sleep(0.02)  # polling for the grace period, not synchronising
    return [f"thread {t.name!r} (daemon={t.daemon})" for t in threads] + [
        _describe_process(pid, cmd) for pid, cmd in sorted(live.items())
    ]


def snapshot() -> tuple[set[threading.Thread], set[int]]:
    children = child_processes()
    return set(threading.enumerate()), {p for p, (_, z) in children.items() if not z}


def kill_leaked(before_children: set[int]) -> None:
    for pid, (_, zombie) in child_processes().items():
        if not zombie and pid not in before_children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _reap([pid])
