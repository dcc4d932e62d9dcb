"""What a turn needs of an agent, whatever its protocol: the events of one turn, answers, an end.

Both the Claude CLI (one-shot or warm) and an ACP agent's turn satisfy :class:`AgentTurn`.
"""

from __future__ import annotations

from typing import Protocol

from agentdoc.agents.base.events import Event, TurnEnd


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
