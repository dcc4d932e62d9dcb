"""How a turn's session comes about, and the small pure parts of choosing it.

A stored session is continued with what the agent offers: ``session/resume`` (no replay), else
``session/load`` (the agent replays the history first), else not at all; a fork needs
``session/fork``. Whatever cannot be continued becomes a new session, seeded with the
conversation so far when the caller has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from agentdoc.agents.acp.schema import SessionResult
from agentdoc.errors import AgentCannotStart

# A session id as the document's `session:` takes it (UUIDs, OpenCode's `ses_…`): an agent's
# id that is a path or a flag is refused where it arrives.
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")

# How the turn's session came about: "continued" (this process ran the previous turn), the
# agent's own resume / load / fork, or a new session ("seeded": sent the conversation so far).
SessionHow = Literal["continued", "resumed", "loaded", "forked", "seeded", "new"]


@dataclass(frozen=True, slots=True)
class SessionOpened:
    session_id: str
    how: SessionHow
    model: str | None = None
    note: str | None = None  # why a resume or load was not used, when it failed
    # What the agent answered: the modes and options the session can be set to.
    result: SessionResult | None = None

    @property
    def first(self) -> bool:
        """A session a document's conversation starts in (its first footer is here)."""
        return self.how in ("new", "seeded", "forked")

    def footer(self, *more: str) -> str | None:
        """What the reply's footer says of the session: which way it was continued, and
        `more` (what the agent could not be set to)."""
        said = _SAID.get(self.how)
        if said is not None and self.note:
            said = f"{said} ({self.note})"
        parts = [p for p in (said, *more) if p]
        return "; ".join(parts) or None


_SAID: dict[SessionHow, str] = {
    "resumed": "session resumed",
    "loaded": "session loaded",
    "forked": "session forked",
    "seeded": "new session, sent the conversation so far",
}


def why(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the result"
    return f"{where}: {first['msg']}"


class Refused(AgentCannotStart):
    """The agent answered a request with a JSON-RPC error (not an auth one)."""

    def __init__(self, method: str, reason: str) -> None:
        super().__init__(f"{method}: {reason}")
        self.reason = reason


def reopen_way(
    resume: bool, load: bool, fork_offered: bool, *, fork: bool
) -> tuple[str, SessionHow] | str:
    """How to continue (or fork) a stored session with what the agent offers, or why not."""
    if fork:
        return ("session/fork", "forked") if fork_offered else "cannot fork a session"
    if resume:
        return "session/resume", "resumed"
    if load:
        return "session/load", "loaded"
    return "cannot resume or load a session"


def with_reasons(text: str, how: SessionHow, reasons: tuple[str, ...]) -> str:
    """The prompt, opened with what the person said answering the tool requests of the
    session's last turn (ACP's answer has no field for it)."""
    if not reasons or how not in ("continued", "resumed", "loaded"):
        return text  # a new session never saw the tool calls they are about
    said = "\n".join(f"- {reason}" for reason in reasons)
    return f"(What I said when answering your tool requests:\n{said})\n\n{text}"
