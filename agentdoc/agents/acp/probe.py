"""Is an ACP agent usable? Start it, send `initialize`, read its answer, stop it.

`agentdoc doctor` runs this for every configured ACP agent. It needs no network and no account:
the handshake only says which protocol version and capabilities the agent has, so it can run
before the person has logged in.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol

from pydantic import BaseModel, ValidationError

from agentdoc.agents.base.child import Child, child_env, spawn
from agentdoc.agents.base.clearance import Clearance
from agentdoc.errors import AgentdocError, AgentNotFound

PROTOCOL_VERSION = 1
_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "clientCapabilities": {
            "fs": {"readTextFile": False, "writeTextFile": False},
            "terminal": False,
        },
        "clientInfo": {"name": "agentdoc", "version": "doctor"},
    },
}
_STOP_GRACE = 2.0
_EXIT_GRACE = 0.5
_STDERR_TAIL = 300


class AgentSpec(Protocol):
    """What the probe needs of an agent's entry in the registry."""

    @property
    def command(self) -> tuple[str, ...]: ...

    @property
    def env(self) -> Mapping[str, str]: ...


class AgentInfo(BaseModel):
    """What an agent said about itself in the handshake."""

    protocol_version: int
    name: str | None = None
    version: str | None = None
    capabilities: tuple[str, ...] = ()

    def describe(self) -> str:
        who = " ".join(part for part in (self.name, self.version) if part) or "unnamed agent"
        can = f" ({', '.join(self.capabilities)})" if self.capabilities else ""
        return f"ACP {self.protocol_version}, {who}{can}"


def find_command(command: Sequence[str], environ: Mapping[str, str]) -> str:
    """The agent's program as the environment's PATH finds it; AgentNotFound if it does not."""
    program = command[0]
    found = shutil.which(program, path=environ.get("PATH", os.defpath))
    if found is None:
        raise AgentNotFound(f"{program} not found" + ("" if os.sep in program else " on PATH"))
    return found


def handshake(agent: AgentSpec, environ: Mapping[str, str], timeout: float) -> AgentInfo:
    """Run `initialize` against the agent, in an empty folder of its own (an agent reads the
    settings of the folder it starts in); AgentdocError saying what went wrong otherwise."""
    program = find_command(agent.command, environ)
    env = child_env(environ, agent.env)
    with (
        tempfile.TemporaryFile() as stderr,
        tempfile.TemporaryDirectory(prefix="agentdoc-doctor-") as scratch,
    ):
        try:
            process = spawn(
                [program, *agent.command[1:]],
                Path(scratch),
                env,
                clearance=Clearance.scratch(Path(scratch)),
                stderr=stderr,
            )
        except OSError as exc:
            raise AgentdocError(f"cannot start {program}: {exc.strerror or exc}") from exc
        try:
            answer = _exchange(process, timeout)
            exited = _exit_code(process) if answer is None else None
        finally:
            _stop(process)
        if answer is None:
            raise AgentdocError(_no_answer(exited, timeout, _tail(stderr)))
    return parse_answer(answer)


def _exchange(process: subprocess.Popen[bytes], timeout: float) -> dict[str, Any] | None:
    assert process.stdin is not None and process.stdout is not None
    lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
    reader = threading.Thread(target=_read, args=(process.stdout, lines), daemon=True)
    reader.start()
    try:
        process.stdin.write(json.dumps(_INITIALIZE).encode() + b"\n")
        process.stdin.flush()
    except OSError:
        return None  # it exited before reading: the exit code and stderr say why
    deadline = time.monotonic() + timeout
    with contextlib.suppress(queue.Empty):  # the deadline passed
        while (message := lines.get(timeout=max(0.0, deadline - time.monotonic()))) is not None:
            if message.get("id") == 1:
                return message
    return None


def _exit_code(process: subprocess.Popen[bytes]) -> int | None:
    """Its exit code if it ended by itself (its output closes just before it exits)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=_EXIT_GRACE)
    return process.poll()


def _read(stdout: IO[bytes], lines: queue.Queue[dict[str, Any] | None]) -> None:
    with contextlib.suppress(OSError, ValueError):
        for raw in stdout:
            with contextlib.suppress(ValueError):
                message = json.loads(raw)
                if isinstance(message, dict):
                    lines.put(message)
    lines.put(None)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Close stdin (an ACP agent ends when its client goes), then TERM, then KILL its group."""
    child = Child(process, "end_of_input", "the agent")
    child.stop(_STOP_GRACE)
    child.close_input(wait=0.5)
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _tail(stderr: IO[bytes]) -> str:
    stderr.seek(0)
    text = stderr.read().decode("utf-8", "replace").strip()
    return text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]


def _no_answer(exited: int | None, timeout: float, stderr: str) -> str:
    said = f": {stderr}" if stderr else ""
    if exited is not None:
        return f"exited with {exited} without answering `initialize`{said}"
    return f"no answer to `initialize` within {timeout:g} s (is it an ACP agent?){said}"


def parse_answer(message: dict[str, Any]) -> AgentInfo:
    """The agent's `initialize` answer as AgentInfo, or AgentdocError if it cannot be used."""
    if "error" in message:
        error = message["error"]
        text = error.get("message") if isinstance(error, dict) else error
        raise AgentdocError(f"refused `initialize`: {text}")
    result = message.get("result")
    try:
        answer = _InitializeAnswer.model_validate(result)
    except ValidationError as exc:
        raise AgentdocError(f"answered `initialize` with something else: {result!r}") from exc
    if answer.protocolVersion != PROTOCOL_VERSION:
        raise AgentdocError(
            f"speaks ACP version {answer.protocolVersion}; agentdoc speaks {PROTOCOL_VERSION}"
        )
    info = answer.agentInfo or {}
    return AgentInfo(
        protocol_version=answer.protocolVersion,
        name=_text(info.get("title") or info.get("name")),
        version=_text(info.get("version")),
        capabilities=_capabilities(answer.agentCapabilities or {}),
    )


class _InitializeAnswer(BaseModel):
    protocolVersion: int
    agentCapabilities: dict[str, Any] | None = None
    agentInfo: dict[str, Any] | None = None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _capabilities(raw: dict[str, Any]) -> tuple[str, ...]:
    sessions = raw.get("sessionCapabilities") or {}
    found = ["load"] if raw.get("loadSession") else []
    found += [
        name for name in ("resume", "fork") if isinstance(sessions, dict) and name in sessions
    ]
    if (raw.get("promptCapabilities") or {}).get("image"):
        found.append("images")
    return tuple(found)
