"""Where a document's conversation continues: its fork lineage and the session a resume takes.

``agentdoc.forked_from`` records where a forked document came from; the first prompt of a fork
continues the parent's session as a fork, and after `undo` ``agentdoc.resume_at`` names the
point of the session to continue from. `resume_target` reads both (pure).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, ValidationError

from agentdoc.document import Document

log = logging.getLogger(__name__)


class Lineage(BaseModel):
    """``agentdoc.forked_from``: where a forked document came from."""

    model_config = ConfigDict(extra="allow", frozen=True)

    document: str  # the parent document, relative to this document's folder
    session: str | None = None  # the parent's agent session when the fork was made
    turn: int  # the fork holds the parent's exchanges 1..turn
    # True: the first prompt continues `session` with --fork-session (taken at the parent's last
    # exchange, that session holds exactly this history; at an earlier one, `at` cuts it there).
    fork_session: bool = False
    at: str | None = None  # the agent's mark of the end of `turn` in `session`


def lineage(doc: Document) -> Lineage | None:
    if not doc.meta.forked_from:
        return None
    try:
        return Lineage.model_validate(doc.meta.forked_from)
    except ValidationError as exc:
        log.warning("ignoring agentdoc.forked_from: %s", exc)
        return None


def first_turn_of_fork(doc: Document) -> Lineage | None:
    """The lineage, if the next prompt is the first of a fork that has no session of its own."""
    found = lineage(doc)
    if found is None or doc.meta.session or doc.turn_count() != found.turn:
        return None
    return found


@dataclass(frozen=True)
class Target:
    """The session a resume continues; `fork`: as a copy, ending at `at` when that is set."""

    session: str | None
    fork: bool = False
    at: str | None = None


def resume_target(doc: Document, session: str | None) -> Target:
    """The session a resume would continue, and whether (and where) it must be forked first."""
    if session:
        return Target(session)
    if doc.meta.session:
        at = doc.meta.resume_at
        return Target(doc.meta.session, at is not None, at)
    fork = first_turn_of_fork(doc)
    if fork is not None and fork.fork_session and fork.session:
        return Target(fork.session, True, fork.at)
    return Target(None)
