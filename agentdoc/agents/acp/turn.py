"""One ``session/prompt`` of an ACP agent, as an :class:`~agentdoc.agents.base.AgentTurn`.

The connection's reader thread feeds the turn (updates, permission requests, the prompt's
answer); the turn's owner reads neutral events with :meth:`AcpTurn.next_event`. The events
always end with one ``TurnEnd``: the prompt's answer, or what the failure was. A cancel sends
``session/cancel`` and answers every open permission request ``cancelled``; a turn still not
ended ``cancel_grace`` seconds later has its process stopped.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import threading
import time
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from agentdoc.agents.acp.rpc import Connection, Pending, RequestId
from agentdoc.agents.acp.schema import (
    AUTH_REQUIRED,
    INVALID_PARAMS,
    PermissionRequest,
    PromptResult,
)
from agentdoc.agents.acp.translate import UpdateTranslator
from agentdoc.agents.base.events import Event, PermissionWithdrawn, SessionStarted, TurnEnd
from agentdoc.agents.base.process import END, EndOfStream

log = logging.getLogger(__name__)

CANCEL_GRACE = 5.0  # seconds a cancelled turn has to answer its prompt before we stop it


class Host(Protocol):
    """What a turn needs of the process it runs in (`process.AcpProcess`, which starts turns:
    named here by what it does, so the two modules do not import each other)."""

    name: str
    cwd: Path
    connection: Connection

    @property
    def pid(self) -> int | None: ...

    @property
    def can_fork(self) -> bool: ...

    def kill(self, grace: float = 2.0) -> None: ...

    def close(self, grace: float = 5.0) -> None: ...

    def end_turn(self, turn: AcpTurn) -> None: ...


class AcpTurn:
    def __init__(self, process: Host) -> None:
        self.process = process
        self.session_id: str | None = None  # known once the session is open
        self.translator = UpdateTranslator()
        self.cancel_grace = CANCEL_GRACE
        self._events: queue.Queue[Event] = queue.Queue()
        self._lock = threading.Lock()
        self._open: dict[str, RequestId] = {}  # permission requests waiting for the person
        self._end: TurnEnd | None = None  # queued; nothing after it belongs to the turn
        self._end_read = False
        self._cancel_deadline: float | None = None
        self._stopping = False
        self._answered = threading.Event()  # the turn has its end (or will never get one)
        self._failed_request: str | None = None  # logged failed, not known to be retried yet

    def session_ready(
        self,
        session_id: str,
        translator: UpdateTranslator,
        model: str | None,
        note: str | None = None,
    ) -> bool:
        """The session is open: updates for it are the turn's now. False if the turn was
        cancelled meanwhile (it ends here, no prompt is sent)."""
        with self._lock:
            self.session_id, self.translator = session_id, translator
            if self._cancel_deadline is not None or self._stopping:
                self._finish(self.translator.cancelled())
                return False
            self._put([SessionStarted(session_id, model, note)])
            return True

    def end_early(self, error: str) -> None:
        """The turn could not begin (no handshake, no session): it ends with ``error``."""
        with self._lock:
            if self._end is None:
                stopped = self._stopping or self._cancel_deadline is not None
                self._finish(
                    self.translator.cancelled() if stopped else self.translator.fail(error)
                )

    def _finish(self, events: list[Event]) -> None:
        self._put(events)
        self._answered.set()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def ended(self) -> bool:
        return self._end is not None

    @property
    def ending(self) -> TurnEnd | None:
        """The turn's end, once it has one."""
        return self._end

    # -- fed by the reader thread -----------------------------------------------------------

    def update(self, update: dict[str, Any]) -> None:
        with self._lock:
            if self._end is None:
                self._put(self.translator.update(update))

    def retrying(self, error: str) -> None:
        """The agent failed an API request and will try it again (it said so in its log)."""
        with self._lock:
            if self._end is None:
                self._put(self.translator.retrying(error))

    def request_failed(self, error: str) -> None:
        """The agent failed an API request (its log says so): a retry if another follows."""
        with self._lock:
            self._failed_request = error

    def requested_again(self) -> None:
        """The agent made its next API request: after a failed one, that is a retry."""
        with self._lock:
            error, self._failed_request = self._failed_request, None
            if error is not None and self._end is None:
                self._put(self.translator.retrying(error))

    def permission(self, rpc_id: RequestId, params: dict[str, Any]) -> None:
        try:
            request = PermissionRequest.model_validate(params)
        except ValidationError as exc:
            log.info("%s sent a malformed permission request: %s", self.process.name, exc)
            self.process.connection.respond_error(rpc_id, INVALID_PARAMS, "malformed request")
            return
        with self._lock:
            if self._end is not None or self._cancel_deadline is not None:
                self.process.connection.respond(rpc_id, _CANCELLED)
                return
            key = f"acp-{rpc_id}"
            self._open[key] = rpc_id
            self._put([self.translator.permission(key, request)])

    def prompt_answered(self, pending: Pending) -> None:
        with self._lock:
            if self._end is not None:
                self._answered.set()
                return
            self._withdraw_open()
            events = self._ending(pending)
            end = events[-1] if events and isinstance(events[-1], TurnEnd) else None
            if end is None or not self._branches(end):
                self._finish(events)
                return
        # Keep a copy of the session as it stands now, for a fork or undo at this turn later
        # (the session itself moves on with the next prompt). The turn ends with its answer.
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "cwd": str(self.process.cwd),
            "mcpServers": [],
        }
        self.process.connection.request("session/fork", params).then(
            lambda forked: self._ended_with_branch(events, end, forked)
        )

    def _branches(self, end: TurnEnd) -> bool:
        complete = end.stop_reason not in ("error", "cancelled") and not end.interrupted
        return complete and self.session_id is not None and self.process.can_fork

    def _ended_with_branch(self, events: list[Event], end: TurnEnd, forked: Pending) -> None:
        branch = None
        if forked.error is None and forked.closed is None and isinstance(forked.result, dict):
            found = forked.result.get("sessionId")
            branch = found if isinstance(found, str) and found else None
        if branch is None:
            log.info("%s did not fork its session after the turn", self.process.name)
        with self._lock:
            if self._end is None:
                self._put([*events[:-1], dataclasses.replace(end, branch=branch)])
            self._answered.set()

    def _ending(self, pending: Pending) -> list[Event]:
        name = self.process.name
        if pending.error is not None:
            error = pending.error
            if error.code == AUTH_REQUIRED:
                return self.translator.fail(f"{name} needs you to log in: {error.describe()}")
            return self.translator.fail(f"{name} failed: {error.describe()}")
        if pending.closed is not None:
            if self._stopping or self._cancel_deadline is not None:
                return self.translator.cancelled()
            return self.translator.fail(pending.closed, interrupted=True)
        try:
            result = PromptResult.model_validate(pending.result)
        except ValidationError:
            return self.translator.fail(
                f"{name} answered the prompt with something that is not ACP: "
                f"{str(pending.result)[:200]}"
            )
        if result.stop_reason == "cancelled" and self._cancel_deadline is None:
            # Not our cancel: the agent stopped by itself, as codex-acp does when the person
            # picks "No, and tell Codex what to do differently". The turn is over, not cut off.
            log.info("%s ended the turn as cancelled by itself", name)
            result = result.model_copy(update={"stop_reason": "end_turn"})
        return self.translator.finish(result)

    def _put(self, events: list[Event]) -> None:
        for event in events:
            if isinstance(event, TurnEnd):
                self._end = event
            self._events.put(event)

    def _withdraw_open(self) -> None:
        """Answer every open permission request ``cancelled``; the turn learns they are gone."""
        for key, rpc_id in self._open.items():
            self.process.connection.respond(rpc_id, _CANCELLED)
            self._events.put(PermissionWithdrawn(key))
        self._open.clear()

    # -- the AgentTurn interface ------------------------------------------------------------

    def next_event(self, timeout: float) -> Event | EndOfStream | None:
        if self._end_read and self._events.empty():
            return END
        deadline = self._cancel_deadline
        wait = timeout if deadline is None else min(timeout, deadline - time.monotonic())
        try:
            event = self._events.get(timeout=max(wait, 0.0))
        except queue.Empty:
            if deadline is not None and time.monotonic() >= deadline and self._end is None:
                self.stop(grace=0.0)
            return None
        if isinstance(event, TurnEnd):
            self._end_read = True
        return event

    def answer(self, request_id: str, option_id: str, message: str | None = None) -> bool:
        # ACP's answer carries only the option: a reason the person gave goes to the model as
        # the first words of the next prompt in this session (agentdoc keeps it till then,
        # with the document's state: AgentRequest.said_before).
        with self._lock:
            rpc_id = self._open.pop(request_id, None)
        if rpc_id is None:
            return False
        outcome = {"outcome": {"outcome": "selected", "optionId": option_id}}
        return self.process.connection.respond(rpc_id, outcome)

    def cancel(self) -> None:
        with self._lock:
            if self._end is not None or self._cancel_deadline is not None:
                return
            self._cancel_deadline = time.monotonic() + self.cancel_grace
            if self.session_id is not None:  # else no prompt went out: it never will
                self.process.connection.notify("session/cancel", {"sessionId": self.session_id})
            self._withdraw_open()

    def stop(self, grace: float = 2.0) -> None:
        """End the turn now: ``session/cancel`` first, so a warm agent stays for the next turn;
        its process is stopped if it does not end the turn within `grace` seconds."""
        if self._end is not None:
            return
        self.cancel()
        if self._answered.wait(grace):
            return
        log.info("%s did not end a stopped turn; stopping it", self.process.name)
        self._stopping = True
        self.process.kill(grace)
        if not self._answered.wait(grace + 1.0):
            self.end_early(f"{self.process.name} was stopped")

    def close(self, grace: float) -> TurnEnd | None:
        if not self._answered.wait(grace):
            self.stop()
        self.process.end_turn(self)
        return None if self._end_read else self._end


_CANCELLED = {"outcome": {"outcome": "cancelled"}}
