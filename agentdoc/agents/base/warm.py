"""A warm agent process as the daemon's pool sees it, whatever its protocol.

Each protocol's long-lived process keeps the same few facts (its key, the session it is in,
the document's exchange it ran last); the handle answers the pool from them. A protocol adds
only how a turn begins on its process.
"""

from __future__ import annotations

from typing import Protocol

from agentdoc.agents.base.process import AgentTurn
from agentdoc.agents.base.request import AgentRequest


class LongLived(Protocol):
    """What a protocol's warm process keeps for the pool."""

    key: object
    session_id: str | None  # the session it is in after its last turn
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

    def __init__(self, process: LongLived) -> None:
        self.process = process

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
        return (
            not process.busy
            and process.alive()
            and request.resume is not None
            and request.resume == process.session_id
            # A turn run elsewhere meanwhile (`agentdoc run`) went into the agent's stored
            # session, not into this process's memory of the conversation.
            and request.turn == process.last_turn + 1
            and not request.fork
            and request.session_id is None
        )

    def begin(self, request: AgentRequest) -> AgentTurn:
        raise NotImplementedError

    def close(self, grace: float = 5.0) -> None:
        self.process.close(grace)
