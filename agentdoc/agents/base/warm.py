"""A warm agent process as the daemon's pool sees it, whatever its protocol.

Each protocol's long-lived process keeps the same few facts (its key, the session it is in,
the document's exchange it ran last); the handle answers the pool from them. A process started
ahead of its document's next turn (before the prompt is known) takes that turn only: the next
exchange, no fork, and the session it was started for, which is the one thing a protocol says
(`WarmHandle.started_for`). A protocol adds that and how a turn begins on its process.
"""

from __future__ import annotations

from typing import Protocol

from agentdoc.agents.base.process import AgentTurn
from agentdoc.agents.base.request import AgentRequest


class LongLived(Protocol):
    """What a protocol's warm process keeps for the pool."""

    key: object
    session_id: str | None  # the session it is in after its last turn
    turns: int  # the turns run here
    last_turn: int  # the document's exchange number of the last turn run here
    last_used: float

    @property
    def pid(self) -> int | None: ...

    @property
    def busy(self) -> bool: ...

    def alive(self) -> bool: ...

    def close(self, grace: float = 5.0) -> None: ...


class WarmHandle:
    """A `WarmAgent` over a protocol's long-lived process; subclasses say how a turn begins."""

    def __init__(self, process: LongLived, *, ahead: bool = False) -> None:
        self.process = process
        # Started ahead of the document's next turn, for the session that turn asks for.
        self.ahead = ahead

    @property
    def key(self) -> object:
        return self.process.key

    @property
    def pid(self) -> int | None:
        return self.process.pid

    @property
    def busy(self) -> bool:
        return self.process.busy

    @property
    def last_used(self) -> float:
        return self.process.last_used

    def alive(self) -> bool:
        return self.process.alive()

    def reusable_for(self, request: AgentRequest) -> bool:
        process = self.process
        if not (process.alive() and not process.busy and not request.fork):
            return False
        # A turn run elsewhere meanwhile (`agentdoc run`) went into the agent's stored session,
        # not into this process's memory of the conversation.
        if request.turn != process.last_turn + 1:
            return False
        if self.ahead and process.turns == 0:
            return self.started_for(request)
        return self.continues(request)

    def started_for(self, request: AgentRequest) -> bool:
        """Whether the turn asks for the session this process was started ahead for."""
        raise NotImplementedError

    def continues(self, request: AgentRequest) -> bool:
        """Whether the turn continues the session this process is in."""
        return (
            request.resume is not None
            and request.resume == self.process.session_id
            and request.session_id is None
        )

    def begin(self, request: AgentRequest) -> AgentTurn:
        raise NotImplementedError

    def close(self, grace: float = 5.0) -> None:
        self.process.close(grace)
