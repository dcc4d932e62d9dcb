"""Warm agent processes for the daemon: one per document, bounded, least recently used first out.

A document's process is reused only when the next turn would have started the very same agent
(the key the agent layer gives: for a CLI, its argv apart from the session flags, the cwd
and environment) and the process agrees it can run the request next (the session it is already
in, no fork). Anything else — a new model, effort, system prompt, cwd, permission setting or
agent, a `start`, a fork, a rebuilt session, a process that died — closes the old process and
starts a fresh one; one that died unseen is found out by the turn it ends unheard, which is
begun again on a fresh process (`OnceMore`). Idle processes are closed
after `warm_idle` seconds, and the least recently used idle one goes when more than
`warm_sessions` are up (each idle CLI holds ~185 MB).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentdoc.agents import (
    END,
    Activity,
    AgentRequest,
    AgentTurn,
    EndOfStream,
    Event,
    SessionStarted,
    TurnEnd,
    WarmAgent,
    WarmStart,
    prepare_warm,
)
from agentdoc.config import Settings
from agentdoc.document import sidecar_path
from agentdoc.errors import AgentdocError
from agentdoc.localstate import state_folder

log = logging.getLogger(__name__)

Launcher = Callable[[AgentRequest, Settings, Mapping[str, str] | None], AgentTurn]


def reusable(process: WarmAgent, key: object, request: AgentRequest) -> bool:
    """Whether `process` can run `request` as its next turn."""
    return process.key == key and process.reusable_for(request)


def protected(document: Path) -> tuple[Path, ...]:
    """Files the agent's own tools may never write: they carry the person's answers."""
    return (document, sidecar_path(document), state_folder(document.parent))


class OnceMore:
    """A turn begun on a process that was up before it (kept from an earlier turn, or started
    ahead of this one). Such a process may die between turns (killed, out of memory) and still
    pass for alive a moment later: a killed CLI's threads take a while to exit, its stdin takes
    the prompt meanwhile. The turn then ends before the agent said a word of a reply, so there is
    nothing of it to keep: it is begun again, once, on a fresh process, as if the old one had
    been seen gone. (A process that dies in the moment between sending its request and the
    first word of the answer costs that request twice; it is not told apart from one that
    never read the prompt.)"""

    def __init__(self, turn: AgentTurn, again: Callable[[], AgentTurn]) -> None:
        self._turn = turn
        self._again: Callable[[], AgentTurn] | None = again  # None once anything was said

    @property
    def pid(self) -> int | None:
        return self._turn.pid

    def next_event(self, timeout: float) -> Event | EndOfStream | None:
        event = self._turn.next_event(timeout)
        # Not yet a word: the session the turn continues named before the agent is asked
        # anything (ACP's session set-up, the CLI's init line), and lines that show nothing (the
        # CLI's bookkeeping, some of it left over from the turn before).
        if event is None or self._again is None or isinstance(event, SessionStarted | Activity):
            return event
        again, self._again = self._again, None
        if event is not END and not (isinstance(event, TurnEnd) and event.interrupted):
            return event
        log.info("a warm agent (pid %s) ended before the turn began; starting another", self.pid)
        try:
            fresh = again()
        except AgentdocError as exc:
            log.warning("could not start another agent for the turn: %s", exc)
            return event  # the turn ends as the old process left it
        self._turn.close(grace=1.0)
        self._turn = fresh
        return None  # the caller asks again, of the fresh process

    def answer(self, request_id: str, option_id: str, message: str | None = None) -> bool:
        return self._turn.answer(request_id, option_id, message)

    def cancel(self) -> None:
        self._again = None
        self._turn.cancel()

    def stop(self, grace: float | None = None) -> None:
        self._again = None
        # Each protocol's turn has its own default grace (a warm CLI waits for its interrupt).
        if grace is None:
            self._turn.stop()
        else:
            self._turn.stop(grace)

    def close(self, grace: float) -> TurnEnd | None:
        return self._turn.close(grace)


@dataclass
class WarmPool:
    capacity: int = 4
    idle_timeout: float = 600.0
    _procs: dict[Path, WarmAgent] = field(default_factory=dict, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    started: int = field(default=0, init=False)  # processes started, for tests and benchmarks
    # Documents whose process was started ahead of a prompt and has not run a turn yet.
    _unused: set[Path] = field(default_factory=set, init=False)

    def launcher(self, document: Path) -> Launcher:
        def launch(
            request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None
        ) -> AgentTurn:
            return self.begin(document, request, settings, environ)

        return launch

    def begin(
        self,
        document: Path,
        request: AgentRequest,
        settings: Settings,
        environ: Mapping[str, str] | None,
    ) -> AgentTurn:
        request = replace(request, protect=protected(document.absolute()))
        start = prepare_warm(request, settings, environ)
        with self._lock:
            self._unused.discard(document)
            process = self._procs.get(document)
            if process is None or not reusable(process, start.key, request):
                return self._fresh(document, start, request, "its next turn needs another process")
            turn = process.begin(request)

        def again() -> AgentTurn:
            with self._lock:
                return self._fresh(document, start, request, "it ended a turn unheard")

        return OnceMore(turn, again)

    def _fresh(
        self, document: Path, start: WarmStart, request: AgentRequest, why: str
    ) -> AgentTurn:
        """Begin `request` on a process started for it, in place of the document's old one."""
        old = self._procs.pop(document, None)
        if old is not None:
            self._close_later(old, why)
        process = start.start()
        self.started += 1
        self._procs[document] = process
        log.debug("started a warm %s (pid %s) for %s", request.agent, process.pid, document)
        turn = process.begin(request)
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
        would start; True if one was started. Where the agent can start ahead
        (`WarmStart.start_ahead`: resuming a session, or a new one whose id is drawn now). A
        process the document has is kept if the next turn could use it (same key) or is running;
        an idle one for another agent, model or setting is closed for the new one. When the
        pool is full, the least recently used idle process that has run a turn makes room; one
        started ahead of its prompt and not used yet is never closed for another (opening many
        documents in a row would start and close a process for each)."""
        with self._lock:
            if document not in self._procs and not self._room_for_hint(close=False):
                return False
        request = replace(request, protect=protected(document.absolute()))
        start = prepare_warm(request, settings, environ)
        with self._lock:
            current = self._procs.get(document)
            if current is not None:
                if current.busy or current.key == start.key:
                    return False  # it serves the next turn, or a turn got there first
                self._procs.pop(document)
                self._unused.discard(document)
                self._close_later(current, "its document's next turn needs another process")
            if not self._room_for_hint(close=True):
                return False
            process = start.start_ahead()
            if process is None:
                return False
            self.started += 1
            self._procs[document] = process
            self._unused.add(document)
            log.debug(
                "started a warm %s (pid %s) ahead for %s", request.agent, process.pid, document
            )
        return True

    def _room_for_hint(self, *, close: bool) -> bool:
        if len(self._procs) < self.capacity:
            return True
        used = [
            (p.last_used, path)
            for path, p in self._procs.items()
            if not p.busy and path not in self._unused
        ]
        if not used:
            return False
        if close:
            _, path = min(used, key=lambda item: item[0])
            self._close_later(self._procs.pop(path), "a document about to be used needs room")
        return True

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
                    log.info("%s: its warm agent exited; the next turn starts one", path)
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

    def holds(self, document: Path) -> bool:
        """Whether a process for `document` is up (it may not suit its next turn)."""
        with self._lock:
            process = self._procs.get(document)
        return process is not None and process.alive()

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
    def _close_later(process: WarmAgent, why: str) -> threading.Thread:
        # Closing waits for the CLI to save its session; the caller must not wait for that.
        log.debug("closing a warm agent (pid %s): %s", process.pid, why)
        thread = threading.Thread(target=process.close, daemon=True)
        thread.start()
        return thread
