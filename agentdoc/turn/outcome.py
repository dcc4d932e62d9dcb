"""What a turn reports while it runs and how it ended, and the rules that name its end (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents import Reply, TextPart, ToolPart


@dataclass(frozen=True)
class Progress:
    path: Path
    turn: int
    # "starting", "streaming", "retrying", "waiting" (for a permission answer; `detail` is the
    # tool), "done", "failed", "interrupted", "cancelled"
    state: str
    elapsed: float
    output_chars: int
    session_id: str | None
    detail: str = ""
    reply: Reply | None = None  # the snapshot behind this report (for echoing the reply)


@dataclass(frozen=True)
class TurnOutcome:
    path: Path
    turn: int
    reply: Reply
    state: str  # "done", "failed", "interrupted", "cancelled"
    session_id: str | None
    elapsed: float
    # Text typed below the streaming reply now sits under the fresh `## User` heading: it reads
    # as a pending prompt, but only a save after the reply ended may send it.
    held: bool = False


def final_state(reply: Reply, *, cancelled: bool) -> str:
    """How a finished turn ended: "cancelled", "failed", "interrupted" or "done"."""
    if cancelled:
        return "cancelled"
    if reply.error is not None:
        return "failed"
    return "interrupted" if reply.interrupted else "done"


def unanswered(reply: Reply) -> bool:
    """A turn that ended badly with nothing of a reply to show (no text, no tool use)."""
    ended_badly = reply.error is not None or reply.interrupted
    # What the final render would show, asked of the parts rather than by rendering them all.
    shown = any(
        isinstance(part, ToolPart) or (isinstance(part, TextPart) and part.text.strip())
        for part in reply.parts
    )
    return ended_badly and not shown


def session_lost(reply: Reply) -> bool:
    """The CLI no longer has the session the turn resumed."""
    return reply.error is not None and "No conversation found" in reply.error
