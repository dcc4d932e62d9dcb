"""Newline-delimited JSON-RPC 2.0 over an agent's stdin and stdout.

:class:`Connection` starts the agent in its own process group, reads its stdout on a thread
(one JSON message a line), hands its requests and notifications to the callbacks it was given,
matches answers to our requests by id, and drains stderr concurrently so a chatty agent can
never block on a full pipe. The callbacks run on the reader thread: they must not block.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentdoc.agents.acp.schema import RpcError
from agentdoc.agents.base.child import Child, StderrTail, read_lines, spawn
from agentdoc.agents.base.clearance import Clearance
from agentdoc.errors import AgentCannotStart

log = logging.getLogger(__name__)

RequestId = int | str
OnRequest = Callable[[RequestId, str, dict[str, Any]], None]
OnNotification = Callable[[str, dict[str, Any]], None]
TAIL = 8  # lines of stderr and of non-protocol output kept for messages
STDERR_LINE = 8192  # bytes of one stderr line looked at
EOF_GRACE = 1.0  # seconds an agent gets to exit at end of input before it is signalled


class Pending:
    """An answer we wait for: a result, a JSON-RPC error, or the connection's end."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.result: Any = None
        self.error: RpcError | None = None
        self.closed: str | None = None  # why no answer will ever come
        self._done = threading.Event()
        self._callbacks: list[Callable[[Pending], None]] = []
        self._lock = threading.Lock()

    def wait(self, timeout: float | None) -> bool:
        return self._done.wait(timeout)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def then(self, callback: Callable[[Pending], None]) -> None:
        """Call `callback` once answered (now, if it already is)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def settle(
        self, result: Any = None, error: RpcError | None = None, closed: str | None = None
    ) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self.result, self.error, self.closed = result, error, closed
            self._done.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


def resolve_command(argv: list[str], env: Mapping[str, str]) -> list[str]:
    """The argv with its program found on the agent's PATH, or a message saying it is not."""
    if not argv or not argv[0]:
        raise AgentCannotStart("the agent's command is empty; set `command` in its config entry")
    found = shutil.which(argv[0], path=env.get("PATH"))
    if found is None:
        raise AgentCannotStart(
            f"cannot find {argv[0]!r}: install the agent, or set `command` in the agent's "
            "entry of your agentdoc config to where it is"
        )
    return [found, *argv[1:]]


class Connection:
    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str],
        on_request: OnRequest,
        on_notification: OnNotification,
        name: str = "the agent",
        *,
        clearance: Clearance | None,
    ) -> None:
        self.name = name
        self.clearance = clearance  # for messages: the agent's name in the user's config
        self.argv = argv
        self.cwd = cwd
        self.env = dict(env)
        self._on_request = on_request
        self._on_notification = on_notification
        self._proc: subprocess.Popen[bytes] | None = None
        self._child: Child | None = None  # its writer (a lock of its own) and its stop
        self._pending: dict[int, Pending] = {}
        self._next_id = 0
        self._lock = threading.Lock()  # ids and the pending table
        self._stderr = StderrTail()
        self._garbage: deque[str] = deque(maxlen=TAIL)
        self.gone = threading.Event()  # stdout ended: the agent exited or closed it
        self._stderr_reader: threading.Thread | None = None
        # Told each line of stderr, where an agent's log says what ACP does not (its retries).
        self.on_stderr_line: Callable[[str], None] | None = None

    def start(self) -> Connection:
        argv = resolve_command(self.argv, self.env)
        try:
            self._proc = spawn(argv, self.cwd, self.env, clearance=self.clearance)
        except (OSError, ValueError) as exc:
            raise AgentCannotStart(f"cannot run {argv[0]!r}: {exc}") from exc
        self._child = Child(self._proc, "end_of_input", self.name)
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        return self

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and not self.gone.is_set()

    # -- writing ----------------------------------------------------------------------------

    def request(self, method: str, params: Mapping[str, Any]) -> Pending:
        pending = Pending(method)
        with self._lock:
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = pending
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params)}
        if not self._send(message):
            self._pending.pop(request_id, None)
            pending.settle(closed=self.ended_message())
        return pending

    def notify(self, method: str, params: Mapping[str, Any]) -> bool:
        return self._send({"jsonrpc": "2.0", "method": method, "params": dict(params)})

    def respond(self, request_id: RequestId, result: Mapping[str, Any]) -> bool:
        return self._send({"jsonrpc": "2.0", "id": request_id, "result": dict(result)})

    def respond_error(self, request_id: RequestId, code: int, message: str) -> bool:
        error = {"code": code, "message": message}
        return self._send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def _send(self, message: dict[str, Any]) -> bool:
        """One line to the agent; False if its stdin is gone."""
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
        return self._child is not None and self._child.write(data)

    # -- reading ----------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        try:
            read_lines(self._proc.stdout, self._dispatch)
        finally:
            self.gone.set()
            self._close_pending()

    def _dispatch(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").strip()
        if not line:
            return
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            log.info("agent (pid %s) wrote a line that is not JSON-RPC: %.200s", self.pid, line)
            self._garbage.append(line[:300])
            return
        try:
            self._route(message)
        except Exception:  # a bad message must not end the reader, and so the connection
            log.exception("agent (pid %s): cannot handle %.200s", self.pid, line)

    def _route(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if isinstance(method, str) and "id" in message:
            self._on_request(message["id"], method, params)
        elif isinstance(method, str):
            self._on_notification(method, params)
        elif "id" in message:
            self._answer(message)
        else:
            self._garbage.append(json.dumps(message)[:300])

    def _answer(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        with self._lock:
            pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            log.info("agent (pid %s) answered an unknown request id %r", self.pid, request_id)
            return
        error = message.get("error")
        if error is not None:
            parsed = RpcError.model_validate(error) if isinstance(error, dict) else None
            pending.settle(error=parsed or RpcError(code=0, message=str(error)))
        else:
            pending.settle(result=message.get("result"))

    def _close_pending(self) -> None:
        with self._lock:
            pending, self._pending = list(self._pending.values()), {}
        reason = self.ended_message()
        for item in pending:
            item.settle(closed=reason)

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        stream, listener = self._proc.stderr, self.on_stderr_line
        if listener is None:
            self._stderr.drain(stream)
            return
        partial = b""
        try:
            for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]
                self._stderr.add(chunk)
                *lines, partial = (partial + chunk).split(b"\n")
                partial = partial[-STDERR_LINE:]  # a line that long is no log line we read
                for line in lines:
                    _tell(listener, line[:STDERR_LINE].decode("utf-8", "replace"))
        except (OSError, ValueError):
            pass
        finally:
            if partial:  # its last line, without a newline
                _tell(listener, partial.decode("utf-8", "replace"))
            with contextlib.suppress(OSError):
                stream.close()

    # -- for messages -----------------------------------------------------------------------

    def exit_code(self, timeout: float = 0.5) -> int | None:
        if self._proc is None:
            return None
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def output_tail(self) -> str:
        """What the agent said besides the protocol: its stderr and stray stdout lines."""
        said = [line.rstrip()[:500] for line in self._stderr.since().splitlines()]
        lines = [
            *[line for line in said if line][-TAIL:],
            *(f"(stdout) {g}" for g in self._garbage),
        ]
        return "\n".join(lines[-TAIL:])

    def ended_message(self) -> str:
        code = self.exit_code()
        if self._stderr_reader is not None:
            self._stderr_reader.join(0.5)  # its last words, usually the reason
        how = "closed its output" if code is None else _exit_words(code)
        tail = self.output_tail()
        return f"{self.name} {how}" + (f"; it said:\n{tail}" if tail else "")

    # -- ending -----------------------------------------------------------------------------

    def stop(self, grace: float = 2.0) -> None:
        """End of input, then SIGTERM and SIGKILL to the agent's process group."""
        if self._child is None:
            return
        # Gemini CLI and OpenCode exit at end of input at once; codex-acp never does.
        self._child.stop(grace, first_grace=min(grace, EOF_GRACE))
        self._child.sweep(grace=0.0)  # helpers it left in its group (node → binary)
        self._child.close_input(wait=0.5)  # it may have exited before reading it all


def _tell(listener: Callable[[str], None], line: str) -> None:
    try:
        listener(line)
    except Exception:  # the drain goes on: a full pipe would block the agent
        log.exception("reading a line of the agent's stderr failed")


def _exit_words(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"
