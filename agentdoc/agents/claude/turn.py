"""A Claude CLI turn (one-shot or warm) as an agent-neutral :class:`AgentTurn`.

Lines are parsed and translated here, on the turn's own thread; permission requests become
``PermissionAsked`` with three options, and the answer to one becomes the ``control_response``
the CLI expects (``claude-stream-json.md`` §12a).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from agentdoc.agents.base import events as neutral
from agentdoc.agents.base.process import END, EndOfStream
from agentdoc.agents.claude.events import PermissionRequest, PermissionWithdrawn, StreamError
from agentdoc.agents.claude.stream import convert, load_line, streamed_text
from agentdoc.agents.claude.translate import Translator
from agentdoc.agents.claude.usage import Prices
from agentdoc.agents.claude.warm import AgentProcess, Line

log = logging.getLogger(__name__)

ALLOW, ALWAYS, DENY = "allow_once", "allow_always", "reject_once"
OPTIONS = (
    neutral.PermissionOption(ALLOW, "Allow", "allow_once"),
    neutral.PermissionOption(ALWAYS, "Always allow", "allow_always"),
    neutral.PermissionOption(DENY, "Deny", "reject_once"),
)
_ACTIVITY = neutral.Activity()


def response(
    request: PermissionRequest, option_id: str, message: str | None = None
) -> dict[str, Any]:
    """The ``control_response`` body for an answer (an unknown option denies)."""
    if option_id not in (ALLOW, ALWAYS):
        return {"behavior": "deny", "message": message or "The user denied this."}
    allowed: dict[str, Any] = {"behavior": "allow", "updatedInput": request.input}
    if option_id == ALWAYS:
        allowed["updatedPermissions"] = [
            {
                "type": "addRules",
                "rules": [{"toolName": request.tool_name}],
                "behavior": "allow",
                "destination": "session",
            }
        ]
    return allowed


def asked(request: PermissionRequest) -> neutral.PermissionAsked:
    return neutral.PermissionAsked(
        request.request_id,
        request.tool_name,
        dict(request.input),
        request.description,
        request.tool_use_id,
        OPTIONS,
    )


class ClaudeTurn:
    """One turn of the CLI, read as neutral events."""

    def __init__(
        self,
        process: AgentProcess,
        cost_before: float = 0.0,
        on_total: Callable[[float], None] | None = None,
        counted: bool = False,
        prices: Prices | None = None,
    ) -> None:
        """``cost_before``: the running total the CLI will count this turn's cost onto
        (``counted``: as the process itself reported it); ``on_total``: told the new total
        once the turn's result has come; ``prices``: the models' prices the process's results
        taught, to estimate a turn that ends without one."""
        self.process = process
        self._translator = Translator(cost_before, counted, prices)
        self._on_total = on_total
        self._ready: deque[neutral.Event] = deque()
        self._asked: dict[str, PermissionRequest] = {}
        self._eof = False

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def next_event(self, timeout: float) -> neutral.Event | EndOfStream | None:
        deadline = time.monotonic() + timeout
        while not self._ready:
            if self._eof:
                return END
            line = self.process.next_line(deadline - time.monotonic())
            if line is None:
                return None
            if line == b"":
                self._eof = True
            elif not self._translate(line):
                return _ACTIVITY  # a line that shows nothing still shows the CLI is alive
        return self._ready.popleft()

    def _translate(self, line: Line) -> bool:
        try:
            # A warm process's reader has read the line into its object already: once only.
            raw = line if isinstance(line, dict) else load_line(line)
            if raw is not None and (delta := streamed_text(raw)) is not None:
                self._ready.extend(self._translator.text_delta(*delta))
                return bool(self._ready)
            event = None if raw is None else convert(raw)
        except StreamError as exc:
            log.warning("skipping a corrupt line from claude: %s", exc)
            return False
        if isinstance(event, PermissionRequest):
            self._asked[event.request_id] = event
            self._ready.append(asked(event))
        elif isinstance(event, PermissionWithdrawn):
            self._asked.pop(event.request_id, None)
            self._ready.append(neutral.PermissionWithdrawn(event.request_id))
        elif event is not None:
            self._ready.extend(self._translator.feed(event))
            total = self._translator.reported_total
            if self._on_total is not None and total is not None and self._translator.ended:
                self._on_total(total)
        return bool(self._ready)

    def answer(self, request_id: str, option_id: str, message: str | None = None) -> bool:
        request = self._asked.pop(request_id, None)
        if request is None:
            return False
        return self.process.respond(request_id, response(request, option_id, message))

    def cancel(self) -> None:
        # The CLI's own interrupt (warm) or SIGINT (one-shot) ends the turn with its result.
        self.process.stop()

    def stop(self, grace: float | None = None) -> None:
        # Each kind of CLI process has its own default: a warm one waits for its interrupt.
        if grace is None:
            self.process.stop()
        else:
            self.process.stop(grace)

    def close(self, grace: float) -> neutral.TurnEnd | None:
        # A stopped CLI prints its result (with what the turn cost) as it exits, and the reader
        # may pass it on after the exit is seen: read up to the end of output before calling
        # the turn unanswered, or a cancel under load loses the turn's cost.
        deadline = time.monotonic() + grace
        end = None  # the end, if the caller has not taken it from next_event already
        while self._ready or not self._translator.ended:
            event = self.next_event(deadline - time.monotonic())
            if event is None or event is END:
                break
            if isinstance(event, neutral.TurnEnd):
                end = event
        if self._translator.ended:
            self.process.finish(grace)
            return end
        code = self.process.wait()
        return self._translator.no_result(code, self.process.stderr)
