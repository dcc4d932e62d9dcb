"""What a turn needs of an agent, whatever its protocol: the events of one turn, answers, an end.

Both the Claude CLI (one-shot or warm) and an ACP agent's turn satisfy :class:`AgentTurn`; the
daemon keeps warm processes through :class:`WarmAgent`.
"""

from __future__ import annotations

from typing import Protocol

from agentdoc.agents.base.events import Event, TurnEnd
from agentdoc.agents.base.request import AgentRequest


class EndOfStream:
    """Returned by :meth:`AgentTurn.next_event` once the agent will say nothing more."""

    def __repr__(self) -> str:
        return "END"


END = EndOfStream()


class AgentTurn(Protocol):
    """One turn of one agent process (started for it, or a warm one reused)."""

    @property
    def pid(self) -> int | None: ...

    def next_event(self, timeout: float) -> Event | EndOfStream | None:
        """The next event; None when none came within ``timeout`` seconds."""
        ...

    def answer(self, request_id: str, option_id: str, message: str | None = None) -> bool:
        """Answer a ``PermissionAsked`` with one of its options (``message``: why, on a
        reject). False if the agent no longer waits for it."""
        ...

    def cancel(self) -> None:
        """Ask the agent to end the turn early; it still ends with ``TurnEnd``."""
        ...

    def stop(self, grace: float = 2.0) -> None:
        """End the process (staged: politely first), for a turn that must end now."""
        ...

    def close(self, grace: float) -> TurnEnd | None:
        """Wait for the turn's process work to end (a warm process stays up for the next
        turn). The ``TurnEnd`` to use when the agent never sent one — how the process ended,
        in the neutral vocabulary — else None."""
        ...


class WarmAgent(Protocol):
    """A long-lived agent process that runs one document's turns one after another."""

    @property
    def key(self) -> object:
        """What a turn must share with this process (command, cwd, environment) to reuse it."""
        ...

    @property
    def pid(self) -> int | None: ...

    @property
    def busy(self) -> bool: ...

    @property
    def last_used(self) -> float:
        """``time.monotonic()`` when its last turn ended (or it started)."""
        ...

    def alive(self) -> bool: ...

    def reusable_for(self, request: AgentRequest) -> bool:
        """Whether ``request`` can be this process's next turn (same session, next exchange,
        not busy, still running); the key is the caller's to compare."""
        ...

    def begin(self, request: AgentRequest) -> AgentTurn: ...

    def close(self, grace: float = 5.0) -> None:
        """Let the agent save its session and exit; stop it if it does not."""
        ...


class WarmStart(Protocol):
    """A warm process about to be started for a request, keyed before it starts."""

    @property
    def key(self) -> object: ...

    def start(self) -> WarmAgent: ...

    def start_ahead(self) -> WarmAgent | None:
        """Start the process before its prompt is known, ready to run the request it was
        prepared for as its next turn; None if this agent cannot (for Claude: a new session's
        id is chosen when its prompt is sent, so only a resumed session can start ahead)."""
        ...
