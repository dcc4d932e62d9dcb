"""The agent at the other end of one ACP connection: its program, the handshake, and what it
offered there. `process.AcpProcess` builds sessions and turns on it.

:meth:`AcpPeer.start` runs ``initialize`` (protocol version 1 only) and remembers what the agent
offers; a request that fails before a prompt is sent raises
:class:`~agentdoc.errors.AgentCannotStart` with a message for people.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Self

from pydantic import ValidationError

from agentdoc.agents.acp.rpc import Connection, RequestId
from agentdoc.agents.acp.schema import (
    AUTH_REQUIRED,
    AUTH_STATUS,
    METHOD_NOT_FOUND,
    PROTOCOL_VERSION,
    InitializeResult,
    client_capabilities,
    logged_out,
)
from agentdoc.agents.acp.sessions import Refused, why
from agentdoc.agents.base.clearance import Clearance
from agentdoc.errors import AgentCannotStart, NotLoggedIn

log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT = 45.0  # node-based agents took 11 s to start on a busy two-core machine
SESSION_TIMEOUT = 60.0  # a session/load replays the whole history first


class ExitedAtStart(AgentCannotStart):
    """The agent's program ended before it answered a request made before any prompt."""


class AcpPeer:
    """One agent program over one connection, until it is stopped."""

    def __init__(
        self,
        argv: list[str],
        cwd: Path,
        env: Mapping[str, str],
        *,
        name: str,
        handshake_timeout: float,
        session_timeout: float,
        clearance: Clearance | None,
    ) -> None:
        self.name = name
        self.command = tuple(argv)
        self.cwd = cwd
        self.env = env
        self.handshake_timeout = handshake_timeout
        self.session_timeout = session_timeout
        self.connection = self._connect(clearance)
        self.info: InitializeResult | None = None
        # The agent's words for having no login, when it said so (see schema.AUTH_STATUS).
        self.logged_out: str | None = None
        self.login_told = threading.Event()  # an AUTH_STATUS notification came
        self._ready_lock = threading.Lock()
        # Set by a stop from outside (the daemon closing, a pool letting the agent go), under
        # `_stop_lock` with the swap of a restarted connection: an exit it caused is not a
        # failed first start, and nothing is started after it.
        self._stop_lock = threading.Lock()
        self._stopped = False

    def _connect(self, clearance: Clearance | None) -> Connection:
        connection = Connection(
            list(self.command),
            self.cwd,
            self.env,
            self._on_request,
            self._on_update,
            self.name,
            clearance=clearance,
        )
        connection.on_stderr_line = self._on_stderr_line
        return connection

    # -- start ------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start the agent and shake hands with it."""
        return self.spawn().ready()

    def spawn(self) -> Self:
        """Start the agent's program (AgentCannotStart if there is none); no handshake yet."""
        self.connection.start()
        return self

    def ready(self) -> Self:
        """Shake hands, once; a failed handshake stops the agent. One that exits in the middle
        of it is started once more: nothing was asked of it yet, and an agent's first start on
        a machine can fail that way (two OpenCode processes starting at once both create its
        database, and one exits)."""
        with self._ready_lock:
            if self.info is not None:
                return self
            try:
                try:
                    self.info = self._handshake()
                except ExitedAtStart as exc:
                    self.connection.stop(0.5)
                    with self._stop_lock:
                        if self._stopped:
                            raise
                        log.info("%s exited as it started (%s); starting it again", self.name, exc)
                        self.connection = self._connect(self.connection.clearance).start()
                    self.info = self._handshake()
            except BaseException:
                self.kill(grace=0.5)
                raise
        return self

    def _handshake(self) -> InitializeResult:
        params = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": client_capabilities()}
        try:
            raw = self._call("initialize", params, self.handshake_timeout)
        except Refused as exc:
            raise self._cannot(f"refused the handshake: {exc.reason}") from exc
        try:
            info = InitializeResult.model_validate(raw)
        except ValidationError as exc:
            raise self._cannot(
                f"answered initialize with something that is not ACP: {why(exc)}"
            ) from exc
        if info.protocol_version != PROTOCOL_VERSION:
            raise self._cannot(
                f"speaks ACP version {info.protocol_version}; agentdoc speaks version "
                f"{PROTOCOL_VERSION}. Use a release of the agent that supports version 1."
            )
        return info

    def _call(self, method: str, params: Mapping[str, Any], timeout: float) -> Any:
        """The result of one request, or AgentCannotStart saying why there is none."""
        pending = self.connection.request(method, params)
        if not pending.wait(timeout):
            tail = self.connection.output_tail()
            said = f"; it said:\n{tail}" if tail else ""
            raise self._cannot(f"did not answer {method} within {timeout:.0f} s{said}")
        if pending.closed is not None:
            raise ExitedAtStart(f"{pending.closed}\n(during {method})")
        if pending.error is not None:
            if pending.error.code == AUTH_REQUIRED:
                raise self.not_logged_in(pending.error.describe())
            raise Refused(method, pending.error.describe())
        return pending.result

    def _cannot(self, what: str) -> AgentCannotStart:
        return AgentCannotStart(f"{self.name} {what}")

    def not_logged_in(self, message: str) -> NotLoggedIn:
        """The error for an agent that says it has no login, with the ways it offers."""
        methods = tuple(m.name or m.id for m in self.info.auth_methods) if self.info else ()
        ways = f" (it offers: {', '.join(methods)})" if methods else ""
        return NotLoggedIn(
            f"{self.name} needs you to log in ({message}): run `{self.name}` in a terminal once "
            f"and log in{ways}, or set its API key in the agent's `env` in your agentdoc config",
            message,
            methods,
        )

    # -- what it offered in the handshake ------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self.connection.pid

    def alive(self) -> bool:
        return self.connection.alive()

    @property
    def can_resume(self) -> bool:
        return bool(
            self.info and self.info.agent_capabilities.session_capabilities.resume is not None
        )

    @property
    def can_load(self) -> bool:
        return bool(self.info and self.info.agent_capabilities.load_session)

    @property
    def can_fork(self) -> bool:
        return bool(
            self.info and self.info.agent_capabilities.session_capabilities.fork is not None
        )

    @property
    def can_close(self) -> bool:
        return bool(
            self.info and self.info.agent_capabilities.session_capabilities.close is not None
        )

    def close_session(self, session_id: str) -> None:
        self._call("session/close", {"sessionId": session_id}, self.session_timeout)

    @property
    def accepts_images(self) -> bool:
        return bool(self.info and self.info.agent_capabilities.prompt_capabilities.image)

    @property
    def agent_name(self) -> str | None:
        info = self.info.agent_info if self.info else None
        return info.name if info else None

    # -- what the agent sends unasked (a process with turns takes more of it) ----------------

    def _on_update(self, method: str, params: dict[str, Any]) -> None:
        if method == AUTH_STATUS:
            self.logged_out = logged_out(params)
            self.login_told.set()

    def wait_for_login(self, timeout: float) -> None:
        """Give an agent that pushes its login (see `AgentCapabilities.pushes_login`) up to
        `timeout` seconds to tell it: its first push can come after a session opened."""
        if self.info is not None and self.info.agent_capabilities.pushes_login:
            self.login_told.wait(timeout)

    def _on_stderr_line(self, line: str) -> None:
        return None

    def _on_request(self, rpc_id: RequestId, method: str, params: dict[str, Any]) -> None:
        # We advertised no fs/* or terminal/*: the agent's own tools do that work.
        self.connection.respond_error(rpc_id, METHOD_NOT_FOUND, f"agentdoc offers no {method}")

    # -- ending -----------------------------------------------------------------------------

    def kill(self, grace: float = 2.0) -> None:
        self._stop(grace)

    def close(self, grace: float = 5.0) -> None:
        """End of input lets the agent save its session and exit; stop it if it does not."""
        self._stop(grace)

    def _stop(self, grace: float) -> None:
        with self._stop_lock:
            self._stopped = True
            connection = self.connection
        connection.stop(grace)
