"""A long-lived Claude Code CLI (``--input-format stream-json``): many turns, one start-up.

The CLI pays ~0.7 s before its first API request; a process that stays up answers the next
user message within milliseconds (``claude-stream-json.md`` §12). :class:`WarmProcess` is that
process: prompts go in as stdin ``user`` lines, and :meth:`WarmProcess.begin` hands out one
:class:`WarmTurn` at a time, which reads stdout exactly like a one-shot
:class:`~agentdoc.agents.claude.process.ClaudeProcess` does, ending at the turn's ``result`` line.

Control messages live here too: ``interrupt`` for a cancel that keeps the process (§10), and
the answers to ``can_use_tool`` permission requests (§12a). The process runs in its own process
group like a one-shot turn; its stdin is a pipe from us, so if we die the CLI sees end of input
and exits once the turn in flight (if any) is over, leaving no orphan behind.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import subprocess
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from agentdoc.agents.base.child import Child, StderrTail
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.prompt import ImagePart
from agentdoc.agents.claude.events import StreamError
from agentdoc.agents.claude.framing import iter_line_batches
from agentdoc.agents.claude.output import paced, pipe_chunks
from agentdoc.agents.claude.process import popen_claude
from agentdoc.agents.claude.prompt import user_message as user_message  # for its tests
from agentdoc.agents.claude.stream import load_line

log = logging.getLogger(__name__)

INTERRUPT_GRACE = 3.0  # seconds for an interrupted turn to print its result
STDERR_DRAIN = 1.0  # seconds to wait for an exited CLI's last stderr to be read
# While the CLI streams, its stdout is read in batches this far apart (see `paced`); the turn's
# thread takes its events at the same pace.
READ_PACE = 0.02
_EOF = b""
# A stdout line as the turn gets it: the JSON object it holds, read once by the process's
# reader (which routes control answers itself), or the bytes of a line that is not one.
Line = bytes | dict[str, Any]
# The lines the framing routes: control answers to the process, a result ends a turn, and the
# CLI's calls of our tool hook, which the process answers itself.
_KINDS = ("control_response", "result", "control_request")
# The one hook a warm CLI is started with (see `WarmProcess.start`): the CLI calls it before
# every tool, whatever the permission mode, and runs the tool only once it is answered. It
# answers at once unless a turn's `tools_after` is not set yet.
HOLD_HOOK = "agentdoc-hold"
# Seconds the CLI waits for the hook's answer; a snapshot of a big tree takes a few.
HOLD_TIMEOUT = 600


class AgentProcess(Protocol):
    """What a turn needs from the CLI, one-shot or warm: its lines, a stop, its end."""

    @property
    def pid(self) -> int | None: ...

    @property
    def stderr(self) -> str: ...

    def next_line(self, timeout: float) -> Line | None: ...

    def stop(self, grace: float = 2.0) -> None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def finish(self, grace: float) -> int: ...

    def respond(self, request_id: str, answer: Mapping[str, Any]) -> bool: ...


def route(line: bytes) -> tuple[str, Line]:
    """A stdout line read once: its own ``type`` (only the kinds the framing needs:
    ``control_response``, ``result``, else "") and the object, or the bytes of a junk line."""
    try:
        parsed = load_line(line)
    except StreamError:
        return "", line  # the turn's parser says what was wrong with it
    if parsed is None:
        return "", line
    kind = parsed.get("type")
    return (kind if kind in _KINDS else ""), parsed


def _is_hook(parsed: dict[str, Any]) -> bool:
    request = parsed.get("request")
    return isinstance(request, dict) and request.get("subtype") == "hook_callback"


def control_request(request_id: str, subtype: str) -> bytes:
    line = {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}
    return (json.dumps(line) + "\n").encode("utf-8")


def initialize() -> bytes:
    """The control request that registers `HOLD_HOOK` for every tool (``PreToolUse``)."""
    hooks = {"PreToolUse": [{"hookCallbackIds": [HOLD_HOOK], "timeout": HOLD_TIMEOUT}]}
    line = {
        "type": "control_request",
        "request_id": "agentdoc-init",
        "request": {"subtype": "initialize", "hooks": hooks},
    }
    return (json.dumps(line) + "\n").encode("utf-8")


def control_response(request_id: str, answer: Mapping[str, Any]) -> bytes:
    line = {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": dict(answer)},
    }
    return (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")


class WarmProcess:
    """One long-lived CLI. Thread-safe for one turn at a time plus `close()` from elsewhere."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: dict[str, str],
        clearance: Clearance | None,
        key: object = None,
    ) -> None:
        self.argv = argv
        self.clearance = clearance
        self.key = key  # what a turn must share with this process to reuse it
        self.cwd = cwd
        self.env = env
        self.session_id: str | None = None  # the session the CLI is in after its last turn
        self.turns = 0
        self.last_turn = 0  # the document's exchange number of the last turn run here
        self.last_used = time.monotonic()
        # The CLI's running total of cost after its last turn (its turns subtract it); None
        # until it has reported one.
        self.running_cost: float | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._child: Child | None = None
        self._lines: queue.SimpleQueue[Line] = queue.SimpleQueue()
        self._stderr = StderrTail()
        self._stderr_reader: threading.Thread | None = None
        self._turn: WarmTurn | None = None
        self._acks: dict[str, threading.Event] = {}
        # The running turn's `tools_after`, and the hook calls held until it is set.
        self._hold: threading.Event | None = None
        self._held: list[str] = []
        self._hold_lock = threading.Lock()

    def start(self) -> WarmProcess:
        self._proc = popen_claude(self.argv, self.cwd, self.env, clearance=self.clearance)
        self._child = Child(self._proc, "interrupt", "claude")
        # Before any prompt: the CLI reads its stdin in order, so every turn's tools go through
        # the hook. Held tools are what lets a turn's undo snapshot run beside its request.
        self.write(initialize())
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def busy(self) -> bool:
        return self._turn is not None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            chunks = paced(pipe_chunks(self._proc.stdout.fileno()), READ_PACE)
            for batch in iter_line_batches(chunks):
                for line in batch:
                    if line:
                        self._route(line)
        finally:
            with contextlib.suppress(OSError):
                self._proc.stdout.close()
            self._lines.put(_EOF)

    def _route(self, line: bytes) -> None:
        kind, value = route(line)
        if kind == "control_response" and isinstance(value, dict):
            self._acknowledge(value)
        elif kind == "control_request" and isinstance(value, dict) and _is_hook(value):
            self._hook(str(value.get("request_id")))
        elif value:
            self._lines.put(value)

    def _acknowledge(self, parsed: dict[str, Any]) -> None:
        response = parsed.get("response")
        request_id = response.get("request_id") if isinstance(response, dict) else None
        event = self._acks.get(str(request_id))
        if event is not None:
            event.set()

    def _hook(self, request_id: str) -> None:
        """The CLI is about to run a tool: it may once the running turn's `tools_after` is set.
        A call that comes first is held (not answered) until `_release` answers it, even if
        `tools_after` is set by then."""
        with self._hold_lock:
            hold = self._hold
            held = hold is not None and not hold.is_set()
            if held:
                self._held.append(request_id)
            first = held and len(self._held) == 1  # else its answering thread waits already
        if not held:
            self.write(control_response(request_id, {}))
        elif first:
            # Only now does anything wait for the gate: what it waits for (the undo snapshot)
            # may start at once rather than leave the CLI the machine while it sends the prompt.
            threading.Thread(
                target=self._release, args=(hold,), name="agentdoc-hold", daemon=True
            ).start()

    def _release(self, hold: threading.Event) -> None:
        hold.wait()
        with self._hold_lock:
            if self._hold is not hold:
                return  # that turn is over; its held calls went with its interrupt
            held, self._held = self._held, []
        for request_id in held:
            self.write(control_response(request_id, {}))

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        self._stderr.drain(self._proc.stderr)

    def write(self, data: bytes) -> bool:
        """Send one line to the CLI; False if its stdin is gone (the process died)."""
        return self._child is not None and self._child.write(data)

    def begin(
        self,
        prompt: str,
        turn: int = 0,
        message_id: str | None = None,
        images: tuple[ImagePart, ...] = (),
        tools_after: threading.Event | None = None,
    ) -> WarmTurn:
        """Send a prompt; the returned turn reads its events. One turn at a time. Its tools
        run only once `tools_after` is set (None: at once)."""
        assert self._turn is None, "a warm process runs one turn at a time"
        with self._hold_lock:
            self._hold, self._held = tools_after, []
        self.turns += 1
        self.last_turn = turn
        self._turn = WarmTurn(self, self._stderr.total)
        if not self.write(user_message(prompt, message_id, images)):
            log.info("claude (pid %s) is gone; its turn ends at once", self.pid)
        return self._turn

    def counted(self, total: float) -> None:
        """The CLI's running total after the turn that just ended."""
        self.running_cost = total

    def end_turn(self, turn: WarmTurn) -> None:
        if self._turn is turn:
            self._turn = None
        self.last_used = time.monotonic()
        if turn.session_id:
            self.session_id = turn.session_id

    def interrupt(self, grace: float) -> bool:
        """Ask the CLI to abandon the turn in flight; True if it acknowledged in time."""
        request_id = f"agentdoc-{uuid.uuid4().hex[:12]}"
        ack = self._acks[request_id] = threading.Event()
        try:
            return self.write(control_request(request_id, "interrupt")) and ack.wait(grace)
        finally:
            self._acks.pop(request_id, None)

    def next_raw(self, timeout: float) -> Line | None:
        try:
            return self._lines.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def stderr_since(self, offset: int) -> str:
        reader = self._stderr_reader
        if reader is not None and self._proc is not None and self._proc.poll() is not None:
            # Exited: what it said last (why it would not start) may still be in the pipe.
            reader.join(STDERR_DRAIN)
        return self._stderr.since(offset)

    def exit_code(self, timeout: float | None = None) -> int:
        assert self._proc is not None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return -1

    def kill(self, grace: float = 2.0) -> None:
        """The staged stop (SIGINT first), then whatever the CLI left in its group."""
        child = self._child
        if child is None:
            return
        child.stop(grace)
        child.sweep(grace=0.0)
        child.close_input()

    def close(self, grace: float = 5.0) -> None:
        """End of input lets the CLI save its session and exit 0; stop it if it does not."""
        child = self._child
        if child is None:
            return
        child.close_input()
        if child.wait(grace) is None:
            log.info("claude (pid %s) did not exit at end of input; stopping it", child.pid)
        self.kill(grace=1.0)


class WarmTurn:
    """One turn of a warm process, read like a one-shot process: lines until the ``result``."""

    def __init__(self, process: WarmProcess, stderr_offset: int) -> None:
        self.process = process
        self.session_id: str | None = None
        self._stderr_offset = stderr_offset
        self._ready: deque[Line] = deque()
        self._result = False
        self._gone = False  # the process ended (or was stopped) during this turn
        self._ended = False

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def stderr(self) -> str:
        return self.process.stderr_since(self._stderr_offset)

    def next_line(self, timeout: float) -> Line | None:
        """The next line of this turn; b"" after its ``result`` (or the process's end)."""
        if self._ready:
            return self._ready.popleft()
        if self._result or self._gone:
            return _EOF
        line = self.process.next_raw(timeout)
        if line is None:
            return None
        return self._take(line)

    def _take(self, line: Line) -> Line:
        if line == _EOF:
            self._gone = True
            return _EOF
        if not isinstance(line, dict):
            return line
        if line.get("type") == "result":
            self._result = True
        elif self.session_id is None and line.get("subtype") == "init":
            session = line.get("session_id")
            self.session_id = session if isinstance(session, str) else None
        return line

    def respond(self, request_id: str, answer: Mapping[str, Any]) -> bool:
        return self.process.write(control_response(request_id, answer))

    def stop(self, grace: float = INTERRUPT_GRACE) -> None:
        """Interrupt the turn and collect its lines up to ``result``; kill if it won't."""
        if self._result or self._gone:
            return
        if self.process.interrupt(grace):
            deadline = time.monotonic() + grace
            while not (self._result or self._gone):
                line = self.process.next_raw(deadline - time.monotonic())
                if line is None:
                    break
                self._ready.append(self._take(line))
            if self._result:
                return
        log.info("claude (pid %s) did not end an interrupted turn; stopping it", self.pid)
        self.process.kill()
        self._gone = True

    def wait(self, timeout: float | None = None) -> int:
        """0 for a turn that reached its ``result``; else the process's exit code."""
        if not self._ended:
            self._ended = True
            self.process.end_turn(self)
        if self._result:
            return 0
        return self.process.exit_code(timeout if timeout is not None else 5.0)

    def finish(self, grace: float) -> int:
        """The turn reached its ``result``: the process stays, ready for the next turn."""
        return self.wait(grace)

    @property
    def finished(self) -> bool:
        """True once the turn reached its ``result`` with the process still usable."""
        return self._result and not self._gone
