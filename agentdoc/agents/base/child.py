"""One way to own an agent's process, for every protocol: spawn, write, read, stop, sweep.

Every agent runs in its own process group, so a stop reaches whatever it spawned (npm shims
start node, node starts a native binary). Its stdin is ours alone and written under one lock
(permission answers, prompts and control messages come from different threads); its stderr is
drained all the time, keeping a tail for messages, so a chatty agent never blocks on a full
pipe. The stop is staged, its first step the one the protocol says lets the agent save its
session: SIGINT for the Claude CLI, end of input for an ACP agent. What it left behind in its
group is swept after it exits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal

from agentdoc.agents.base.clearance import Clearance, cleared

log = logging.getLogger(__name__)

FirstStep = Literal["interrupt", "end_of_input"]
TAIL_BYTES = 64 * 1024  # of stderr kept for messages; the rest is dropped as it comes
# A killed process is gone once the kernel has freed its memory: milliseconds for an agent's
# node heap, longer on a loaded machine. Bounded: a zombie nobody reaps keeps its group listed.
KILLED_WITHIN = 2.0


def child_env(base: Mapping[str, str], *extra: Mapping[str, str]) -> dict[str, str]:
    """The environment an agent process starts with: ``base`` and then what the protocol or
    the agent's config entry adds. The one place a child's environment is built."""
    env = dict(base)
    for more in extra:
        env.update(more)
    return env


def spawn(
    argv: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    clearance: Clearance | None,
    stdout: int | IO[bytes] = subprocess.PIPE,
    stderr: int | IO[bytes] = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (never through a shell) in a process group of its own, stdin a pipe,
    given the gate's leave for ``cwd`` (NotCleared without it, before anything runs).
    OSError and ValueError are the caller's to word: each protocol knows what to suggest."""
    cleared(clearance, cwd)
    return subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
    )


def read_lines(stream: IO[bytes], on_line: Callable[[bytes], None]) -> None:
    """Frame ``stream`` into lines for ``on_line`` until it ends, then close it (a thread's
    body: only framing happens here, meaning is the caller's)."""
    try:
        for raw in iter(stream.readline, b""):
            on_line(raw)
    finally:
        with contextlib.suppress(OSError):
            stream.close()


class StderrTail:
    """The last ``TAIL_BYTES`` an agent wrote to stderr, and how much it wrote in all."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.total = 0  # bytes seen, the offset `since` counts from
        self._chunks: deque[bytes] = deque()
        self._kept = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            self._chunks.append(chunk)
            self.total += len(chunk)
            self._kept += len(chunk)
            while self._kept - len(self._chunks[0]) >= self.limit:
                self._kept -= len(self._chunks.popleft())

    def since(self, offset: int = 0) -> str:
        """What came after ``offset`` bytes (what is still kept of it)."""
        with self._lock:
            data = b"".join(self._chunks)
            start = max(0, len(data) - (self.total - offset))
        return data[start:].decode("utf-8", "replace")

    def drain(self, stream: IO[bytes]) -> None:
        """Read ``stream`` to its end into the tail (a thread's body)."""
        try:
            for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
                self.add(chunk)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()


class Child:
    """A running agent process: the locked writer to its stdin and its staged stop."""

    def __init__(self, proc: subprocess.Popen[bytes], first: FirstStep, name: str = "agent"):
        self.proc = proc
        self.first = first  # the stop's polite first step
        self.name = name  # for the log
        self.lock = threading.Lock()  # every write to stdin, and closing it

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def write(self, data: bytes) -> bool:
        """Send ``data`` to the agent; False if its stdin is gone (the process died)."""
        stdin = self.proc.stdin
        if stdin is None:
            return False
        with self.lock:
            try:
                stdin.write(data)
                stdin.flush()
            except (OSError, ValueError):
                return False
        return True

    def close_input(self, wait: float | None = None) -> bool:
        """End of input; False if a write blocked on an agent that stopped reading held the
        lock for ``wait`` seconds (then only signals will do)."""
        stdin = self.proc.stdin
        if stdin is None:
            return True
        if not self.lock.acquire(timeout=-1 if wait is None else wait):
            return False
        try:
            with contextlib.suppress(OSError):
                stdin.close()
        finally:
            self.lock.release()
        return True

    def wait(self, timeout: float | None = None) -> int | None:
        """Its exit code, or None if it is still running after ``timeout`` seconds."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace: float = 2.0, *, first_grace: float | None = None) -> None:
        """The staged stop: the protocol's first step, then SIGTERM, then SIGKILL, each given
        ``grace`` seconds (the first ``first_grace``, when set), to the whole group."""
        if self.proc.poll() is not None:
            return
        first: signal.Signals | None = signal.SIGINT if self.first == "interrupt" else None
        for sig in (first, signal.SIGTERM, signal.SIGKILL):
            if sig is None:
                self.close_input(wait=0.5)
            elif not _signal_group(self.proc.pid, sig):
                return  # the group is gone
            step = grace if sig is not first or first_grace is None else first_grace
            if self.wait(step) is not None:
                return
            log.info("%s (pid %s) still running after %s", self.name, self.pid, sig or "EOF")

    def sweep(self, grace: float = 1.0) -> None:
        """Stop the rest of its process group, even though its leader has exited: SIGTERM,
        ``grace`` seconds, SIGKILL. It returns once the group is gone, so a daemon that has
        stopped its agents does not exit while a killed helper is still being torn down."""
        pgid = self.proc.pid
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, KILLED_WITHIN)):
            if not _signal_group(pgid, sig):
                return  # nothing left (a lone exited leader is reaped, so its group is gone)
            log.info("stopped what %s (pid %s) left running (%s)", self.name, pgid, sig.name)
            if group_gone(pgid, wait):
                return


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to the group; False if there is no such group any more."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member we may not signal: the others got it
    return True


def group_gone(pgid: int, grace: float) -> bool:
    """Poll whether process group ``pgid`` is empty, for up to ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)  # not a synchronisation: members of a group are not our children
