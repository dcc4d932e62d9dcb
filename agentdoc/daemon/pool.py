"""Warm CLI processes for the daemon: one per document, bounded, least recently used first out.

A document's process is reused only when the next turn would have started the very same CLI:
the same argv apart from the session flags, the same cwd and environment, and the session the
process is already in (`--resume=<its session>`, no fork). Anything else — a new model, effort,
system prompt, cwd, permission setting or CLI path, a `start`, a fork, a rebuilt session, a
process that died — closes the old process and starts a fresh one. Idle processes are closed
after `warm_idle` seconds, and the least recently used idle one goes when more than
`warm_sessions` are up (each idle CLI holds ~185 MB).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentdoc.agents import (
    AgentProcess,
    AgentRequest,
    WarmProcess,
    build_argv,
    build_env,
    check_argv,
    protect_rules,
    resolve_executable,
)
from agentdoc.config import Settings
from agentdoc.document import sidecar_path

log = logging.getLogger(__name__)

Launcher = Callable[[AgentRequest, Settings, Mapping[str, str] | None], AgentProcess]
_SESSION_FLAGS = ("--resume=", "--session-id=", "--fork-session")


def shape(argv: list[str]) -> tuple[str, ...]:
    """The argv without its session flags: what a reused process must agree on."""
    return tuple(a for a in argv if not a.startswith(_SESSION_FLAGS))


def reusable(process: WarmProcess, key: tuple[object, ...], request: AgentRequest) -> bool:
    """Whether `process` can run `request` as its next turn."""
    return (
        process.key == key
        and not process.busy
        and process.alive()
        and request.resume is not None
        and request.resume == process.session_id
        # A turn run elsewhere meanwhile (`agentdoc run`) went into the session file, not into
        # this process's memory of the conversation.
        and request.turn == process.last_turn + 1
        and not request.fork
        and request.session_id is None
    )


def protected(document: Path) -> list[Path]:
    """Files Claude's own tools may never write: they carry the person's answers."""
    return [document, sidecar_path(document), document.parent / ".agentdoc"]


@dataclass(frozen=True)
class _Launch:
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    key: tuple[object, ...]


def _launch(
    document: Path,
    request: AgentRequest,
    settings: Settings,
    environ: Mapping[str, str] | None,
) -> tuple[AgentRequest, _Launch]:
    """The request with the document's protection rules, and how its process is started."""
    request = replace(request, protect=protect_rules(protected(document.absolute())))
    argv = build_argv(resolve_executable(settings.claude), request, settings, warm=True)
    check_argv(argv)
    env = build_env(os.environ if environ is None else environ, settings)
    key = (shape(argv), str(request.cwd), tuple(sorted(env.items())))
    return request, _Launch(argv, request.cwd, env, key)


@dataclass
class WarmPool:
    capacity: int = 4
    idle_timeout: float = 600.0
    _procs: dict[Path, WarmProcess] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    started: int = field(default=0, init=False)  # processes started, for tests and benchmarks

    def launcher(self, document: Path) -> Launcher:
        def launch(
            request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None
        ) -> AgentProcess:
            return self.begin(document, request, settings, environ)

        return launch

    def begin(
        self,
        document: Path,
        request: AgentRequest,
        settings: Settings,
        environ: Mapping[str, str] | None,
    ) -> AgentProcess:
        request, launch = _launch(document, request, settings, environ)
        with self._lock:
            process = self._procs.get(document)
            if process is not None and not reusable(process, launch.key, request):
                self._procs.pop(document)
                self._close_later(process, "its next turn needs another process")
                process = None
            if process is None:
                process = self._start(document, launch)
            turn = process.begin(request.prompt, request.turn)
            self._evict()
        return turn

    def prewarm(
        self,
        document: Path,
        request: AgentRequest,
        settings: Settings,
        environ: Mapping[str, str] | None,
    ) -> bool:
        """Start the process the document's next turn, `request` (its prompt unknown yet),
        would start; True if one was started. Never replacing a process the document has, and
        only to resume a session: a new session's id is chosen when its prompt is sent, so no
        process could be started for it ahead of time. When the pool is full, the least
        recently used idle process that has run a turn makes room; one started ahead of its
        prompt and not used yet is never closed for another (opening many documents in a row
        would start and close a CLI for each)."""
        if request.resume is None or request.fork or request.session_id is not None:
            return False
        with self._lock:
            if document in self._procs or not self._room_for_hint(close=False):
                return False
        request, launch = _launch(document, request, settings, environ)
        with self._lock:
            if document in self._procs or not self._room_for_hint(close=True):
                return False  # a turn (or another hint) got there first
            process = self._start(document, launch)
            # What `reusable` compares: the session the CLI resumes, the turn before this one.
            process.session_id = request.resume
            process.last_turn = request.turn - 1
        return True

    def _room_for_hint(self, *, close: bool) -> bool:
        if len(self._procs) < self.capacity:
            return True
        used = [(p.last_used, path) for path, p in self._procs.items() if not p.busy and p.turns]
        if not used:
            return False
        if close:
            _, path = min(used, key=lambda item: item[0])
            self._close_later(self._procs.pop(path), "a document about to be used needs room")
        return True

    def _start(self, document: Path, launch: _Launch) -> WarmProcess:
        process = WarmProcess(launch.argv, launch.cwd, launch.env, launch.key).start()
        self.started += 1
        self._procs[document] = process
        log.debug("started a warm claude (pid %s) for %s", process.pid, document)
        return process

    def _evict(self) -> None:
        idle = sorted(
            ((p.last_used, path) for path, p in self._procs.items() if not p.busy),
            key=lambda item: item[0],
        )
        excess = len(self._procs) - self.capacity
        for _, path in idle[: max(excess, 0)]:
            self._close_later(self._procs.pop(path), "least recently used")

    def close_idle(self, now: float | None = None) -> None:
        """Close processes idle for `idle_timeout`, any that died between turns, and the least
        recently used idle ones while more than `capacity` are up."""
        now = time.monotonic() if now is None else now
        with self._lock:
            for path, process in list(self._procs.items()):
                if process.busy:
                    continue
                if not process.alive():
                    log.info("%s: its warm claude exited; the next turn starts one", path)
                    self._close_later(self._procs.pop(path), "exited")
                elif now - process.last_used >= self.idle_timeout:
                    self._close_later(self._procs.pop(path), "idle")
            # Busy processes may have kept the pool over its limit; they are idle now.
            self._evict()

    def forget(self, document: Path) -> None:
        """The document is gone (deleted, renamed): its process goes too."""
        with self._lock:
            process = self._procs.pop(document, None)
        if process is not None:
            self._close_later(process, "its document is gone")

    def pids(self) -> list[int]:
        with self._lock:
            return [p.pid for p in self._procs.values() if p.pid is not None]

    def close_all(self) -> None:
        with self._lock:
            processes = list(self._procs.values())
            self._procs.clear()
        threads = [self._close_later(p, "shutting down") for p in processes]
        for thread in threads:
            thread.join(10)

    @staticmethod
    def _close_later(process: WarmProcess, why: str) -> threading.Thread:
        # Closing waits for the CLI to save its session; the caller must not wait for that.
        log.debug("closing warm claude (pid %s): %s", process.pid, why)
        thread = threading.Thread(target=process.close, daemon=True)
        thread.start()
        return thread
