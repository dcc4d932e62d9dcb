"""Where a completed turn sits in the agent's own session, so history can branch or rewind there."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnMark:
    """The agent's own ids for one turn of ``session`` (opaque to everyone but the agent)."""

    session: str
    end: str  # the turn's last message: a fork or an undo continues the session from here
    start: str | None = None  # the turn's prompt: file changes are taken back to this point
