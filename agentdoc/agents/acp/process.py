"""An ACP agent process that lives across turns: one handshake, then sessions and prompts.

:meth:`AcpProcess.start` runs ``initialize`` (in `peer`: protocol version 1 only) and remembers
what the agent offers. :meth:`AcpProcess.begin` puts the turn in a session — the one the process is
already in, else the stored one continued by ``session/resume``, else by ``session/load``, else a
new session seeded with the conversation so far; a fork by ``session/fork`` or seeded — and sends
the prompt. :attr:`AcpProcess.opened` says which it was, for the footer.

``session/load`` replays the whole history as updates before it answers. Updates reach a turn
only once it is registered, which is after that answer, and the reader handles messages in
order: the replay can never reach a turn's events.

Everything that can fail before the prompt is sent raises
:class:`~agentdoc.errors.AgentCannotStart` with a message for people; later failures end the
turn with ``TurnEnd(stop_reason="error")``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentdoc.agents.acp.options import Setup, Wanted, offered, setup, stances
from agentdoc.agents.acp.peer import HANDSHAKE_TIMEOUT, SESSION_TIMEOUT, AcpPeer
from agentdoc.agents.acp.quirks import quirks_for
from agentdoc.agents.acp.rpc import RequestId
from agentdoc.agents.acp.schema import (
    SessionResult,
    text_block,
)
from agentdoc.agents.acp.sessions import (
    SAFE_ID,
    Refused,
    SessionHow,
    SessionOpened,
    reopen_way,
    why,
    with_reasons,
)
from agentdoc.agents.acp.store import keep_loadable
from agentdoc.agents.acp.translate import UpdateTranslator
from agentdoc.agents.acp.turn import AcpTurn
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.offers import Offer, remember
from agentdoc.agents.base.prompt import neutralise_command, neutralise_mentions
from agentdoc.errors import AgentCannotStart

log = logging.getLogger(__name__)


class AcpProcess(AcpPeer):
    """One agent process; one turn at a time, plus :meth:`close` from another thread."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str],
        *,
        name: str = "agent",
        key: object = None,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        session_timeout: float = SESSION_TIMEOUT,
        turn_type: type[AcpTurn] = AcpTurn,
        policy: str | None = None,
        policy_set: bool = False,
        clearance: Clearance | None,
    ) -> None:
        super().__init__(
            argv, cwd, env, name=name, handshake_timeout=handshake_timeout,
            session_timeout=session_timeout, clearance=clearance,
        )  # fmt: skip
        # The user's permission_mode (from the config only), put to the agent as its mode;
        # `policy_set`: its environment already carries it (quirks.POLICY_ENV).
        self.policy = policy
        self.policy_set = policy_set
        self.turn_type = turn_type  # what `begin` returns (a one-shot's turn also ends it)
        self.key = key  # what a turn must share with this process to reuse it
        self.session_id: str | None = None  # the session the agent is in after the last turn
        self.opened: SessionOpened | None = None  # how the current turn's session came about
        self.turns = 0
        self.last_turn = 0
        self.session_costs: dict[str, float] = {}  # the running cost each session last reported
        self.settled: tuple[str | None, str | None] = (None, None)  # the session's model, effort
        self.last_used = time.monotonic()
        self._turn: AcpTurn | None = None
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        return self._turn is not None

    # -- sessions ---------------------------------------------------------------------------

    def open_session(
        self, session_id: str | None, *, fork: bool = False, seeded: bool = False
    ) -> SessionOpened:
        """Put the process in the session a turn asks for (see the module's docstring)."""
        if session_id is not None and session_id == self.session_id and not fork:
            return SessionOpened(
                session_id, "continued", self.opened.model if self.opened else None
            )
        note = None
        if session_id is not None:
            opened = self._reopen(session_id, fork=fork)
            if isinstance(opened, SessionOpened):
                return opened
            note = opened
        return self._new("seeded" if seeded else "new", note)

    def _reopen(self, session_id: str, *, fork: bool) -> SessionOpened | str:
        """The session continued (or forked) by the agent, or why it could not be."""
        way = reopen_way(self.can_resume, self.can_load, self.can_fork, fork=fork)
        if isinstance(way, str):
            return f"{self.name} {way}"
        method, how = way
        params = {"sessionId": session_id, "cwd": str(self.cwd), "mcpServers": []}
        if method == "session/load":
            keep_loadable(quirks_for(self.agent_name).minute_named_store, self.env, session_id)
        try:
            result = self._session_result(method, params)
        except Refused as exc:
            log.info("%s; starting a new session instead", exc)
            return f"{self.name} could not continue its session ({exc.reason})"
        new_id = result.session_id if how == "forked" else session_id
        if not new_id or not SAFE_ID.fullmatch(new_id):
            raise self._cannot(f"answered {method} without a usable session id: {new_id!r}")
        return SessionOpened(new_id, how, result.model(), result=result)

    def _new(self, how: SessionHow, note: str | None = None) -> SessionOpened:
        params = {"cwd": str(self.cwd), "mcpServers": []}
        try:
            result = self._session_result("session/new", params)
        except Refused as exc:
            raise self._cannot(f"refused to start a session: {exc.reason}") from exc
        if not result.session_id or not SAFE_ID.fullmatch(result.session_id):
            # It goes into the document's frontmatter and back into argv and file names.
            raise self._cannot(
                f"answered session/new without a usable session id: {result.session_id!r}"
            )
        return SessionOpened(result.session_id, how, result.model(), note, result)

    def set_up(self, opened: SessionOpened, model: str | None, effort: str | None) -> Setup:
        """Put a just-opened session in the user's policy and the document's model and effort
        (AgentCannotStart if the agent refuses, does not offer the model or effort, or cannot
        be made to ask under an asking policy)."""
        if opened.result is None:
            return Setup()  # continued in this process: set when it opened
        # What it offers and what its modes mean, for `agentdoc status` (which never starts an
        # agent): remembered before a policy it cannot take refuses the turn, so status says so.
        offer = Offer(offered(opened.result), stances=dict(stances(opened.result)))
        remember(self.name, self.command, offer)
        wanted = Wanted(self.policy, model, effort, self.policy_set)
        plan = setup(self.name, opened.result, wanted)
        for call in plan.calls:
            params = {"sessionId": opened.session_id, **call.params}
            try:
                self._call(call.method, params, self.session_timeout)
            except Refused as exc:
                raise self._cannot(f"refused {call.method} {call.params}: {exc.reason}") from exc
        return plan

    def _session_result(self, method: str, params: Mapping[str, Any]) -> SessionResult:
        raw = self._call(method, params, self.session_timeout)
        try:
            return SessionResult.model_validate(raw if raw is not None else {})
        except ValidationError as exc:
            raise self._cannot(
                f"answered {method} with something that is not ACP: {why(exc)}"
            ) from exc

    # -- turns ------------------------------------------------------------------------------

    def begin(
        self,
        prompt: str,
        *,
        session_id: str | None = None,
        fork: bool = False,
        seeded_prompt: str | None = None,
        turn: int = 0,
        extra: tuple[dict[str, Any], ...] = (),
        background: bool = False,
        model: str | None = None,
        effort: str | None = None,
        said_before: tuple[str, ...] = (),
        tools_after: threading.Event | None = None,
        cost_before: float | None = None,
    ) -> AcpTurn:
        """Send a prompt in the session asked for; the returned turn reads its events.

        `seeded_prompt`: what to send instead of `prompt` when the session turns out new (a
        session the agent cannot continue, a fork it cannot do): the prompt with the
        conversation so far. `extra`: more content blocks (images) after the prompt's text.
        `said_before`: what the person said answering the last turn's tool requests (ACP's
        answer has no field for it), sent first when the session is that turn's.
        `tools_after`: the prompt is sent only once it is set (see `AgentRequest`).
        `cost_before`: what the session had cost before, by the caller's record.

        The handshake (if it is still due) and opening the session can take seconds. Without
        `background` they happen here and a failure raises AgentCannotStart; with it the turn
        is returned at once, they happen on a thread, and a failure ends the turn with an
        error — so a caller holding a lock (the daemon's pool) never waits for the agent.
        """
        assert self._turn is None, "an agent process runs one turn at a time"
        current = self.turn_type(self)
        with self._lock:
            self._turn = current
        self.turns += 1
        self.last_turn = turn
        send = functools.partial(
            self._open_and_send, current, prompt, session_id, fork, seeded_prompt, extra,
            (model, effort), said_before, tools_after, cost_before,
        )  # fmt: skip
        if background:
            threading.Thread(target=self._send_later, args=(current, send), daemon=True).start()
            return current
        try:
            send()
        except BaseException:
            self.end_turn(current)
            raise
        return current

    def _send_later(self, current: AcpTurn, send: Callable[[], None]) -> None:
        try:
            send()
        except AgentCannotStart as exc:
            current.end_early(str(exc))
        except Exception as exc:  # a thread's error must end the turn, not vanish
            log.exception("%s: cannot start the turn", self.name)
            current.end_early(f"{self.name}: {exc}")

    def _open_and_send(
        self,
        current: AcpTurn,
        prompt: str,
        session_id: str | None,
        fork: bool,
        seeded_prompt: str | None,
        extra: tuple[dict[str, Any], ...],
        model_effort: tuple[str | None, str | None] = (None, None),
        said_before: tuple[str, ...] = (),
        tools_after: threading.Event | None = None,
        cost_before: float | None = None,
    ) -> None:
        self.ready()
        if any(block.get("type") == "image" for block in extra) and not self.accepts_images:
            raise self._cannot(
                "does not take pictures (its handshake says so): remove the ![…](…) lines "
                "from the prompt, or ask another agent"
            )
        opened = self.open_session(session_id, fork=fork, seeded=seeded_prompt is not None)
        plan = self.set_up(opened, *model_effort)
        self.settled = model_effort
        if opened.how == "loaded" and quirks_for(self.agent_name).late_replay:
            self._after_replay(opened)
        if plan.model:
            opened = dataclasses.replace(opened, model=plan.model)
        self.opened, self.session_id = opened, opened.session_id
        footer = opened.footer(*plan.notes) if opened.first else opened.footer()
        # Updates reach the turn from here on: a load's replay came before its answer.
        quirks = quirks_for(self.agent_name)
        # This process's own last count for the session is the surest baseline: the caller's
        # record misses what a cancelled turn cost.
        before = self.session_costs.get(opened.session_id, cost_before)
        translator = UpdateTranslator(quirks, opened.session_id, opened.model, self.name, before)
        # The session's listed model is often an alias ("auto", "default"): the turn's end
        # names the model the agent says it used, falling back to it; only a model the
        # document chose is named from the start.
        if not current.session_ready(opened.session_id, translator, plan.model, footer):
            return  # cancelled or stopped while the session was opening
        text = seeded_prompt if opened.how == "seeded" and seeded_prompt is not None else prompt
        text = with_reasons(text, opened.how, said_before)
        blocks = [text_block(neutralise_command(neutralise_mentions(text))), *extra]
        params = {"sessionId": opened.session_id, "prompt": blocks}
        if tools_after is not None:
            # ACP has no way to hold an agent's tools whatever its mode (it asks for permission
            # only where its mode says so): the prompt waits instead. The handshake and the
            # session's opening above went on meanwhile.
            tools_after.wait()
        self.connection.request("session/prompt", params).then(current.prompt_answered)

    def _after_replay(self, opened: SessionOpened) -> None:
        """Wait out a replay the agent sends after answering `session/load`: the answer to a
        later request comes after it (messages are handled in order), and updates that reach
        no turn are dropped."""
        modes = opened.result.modes if opened.result else None
        if modes is None or not modes.current_mode_id:
            return
        params = {"sessionId": opened.session_id, "modeId": modes.current_mode_id}
        with contextlib.suppress(Refused):
            self._call("session/set_mode", params, self.session_timeout)

    def end_turn(self, turn: AcpTurn) -> None:
        usage = turn.ending.usage if turn.ending is not None else None
        if usage is not None and usage.session_cost_usd is not None and turn.session_id:
            self.session_costs[turn.session_id] = usage.session_cost_usd
        with self._lock:
            if self._turn is turn:
                self._turn = None
        self.last_used = time.monotonic()

    # -- what the agent sends unasked -------------------------------------------------------

    def _on_update(self, method: str, params: dict[str, Any]) -> None:
        super()._on_update(method, params)
        if method != "session/update":
            return  # notifications we do not know are ignored (the protocol allows more)
        current = self._turn
        update = params.get("update")
        if current is None or params.get("sessionId") != current.session_id:
            return  # between turns, or another session's (a load's replay)
        if isinstance(update, dict):
            current.update(update)

    def _on_stderr_line(self, line: str) -> None:
        """A retry the agent only logs (its quirks row), for the turn in that session."""
        quirks, current = quirks_for(self.agent_name), self._turn
        if quirks.retry_log is None or current is None:
            return
        if (found := quirks.retry_log.search(line)) and found["session"] == current.session_id:
            if quirks.retry_next is None:
                current.retrying(found["error"])
            else:
                current.request_failed(found["error"])
        elif (
            quirks.retry_next is not None
            and (again := quirks.retry_next.search(line))
            and again["session"] == current.session_id
        ):
            current.requested_again()

    def _on_request(self, rpc_id: RequestId, method: str, params: dict[str, Any]) -> None:
        current = self._turn
        if method != "session/request_permission":
            super()._on_request(rpc_id, method, params)
        elif current is None or params.get("sessionId") != current.session_id:
            self.connection.respond(rpc_id, {"outcome": {"outcome": "cancelled"}})
        else:
            current.permission(rpc_id, params)
