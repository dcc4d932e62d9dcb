"""Where a completed turn sits in the agent's own session, so history can branch or rewind there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnMark:
    """The agent's own id of one turn of ``session`` (opaque to everyone but the agent).

    ``start`` names the turn's prompt message: a fork at the turn keeps the session up to the
    turn's last message after it, an undo takes the turn's file changes back to it.
    """

    session: str
    start: str
    agent: str = "claude"  # the agent whose session this is
    # The session's running cost the agent reported at the end of the turn, if it reports one.
    cost_total: float | None = None
