"""What follows a turn whose reply is in the document: its mark, the snapshot of the files after
it, and the git commit if on."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from agentdoc.agents import mark_turn
from agentdoc.config import Settings
from agentdoc.document import Document, DocumentError, FrontmatterError, parse, read_text
from agentdoc.errors import AgentdocError
from agentdoc.records import after_turn as snapshot_after
from agentdoc.records import set_mark
from agentdoc.turn import gitcommit, gitsync
from agentdoc.turn.session import TurnPlan

log = logging.getLogger(__name__)


def after_turn(
    path: Path,
    settings: Settings,
    environ: Mapping[str, str] | None,
    plan: TurnPlan,
    session: str | None,
    started: datetime,
    complete: bool,
    cost_total: float | None = None,
    branch: str | None = None,
    doc: Document | None = None,
    cost: float | None = None,
    kept_in: str | None = None,
) -> None:
    """Record where the turn sits in its session (only a complete one), then commit if on;
    ``doc`` is the document as the turn left it, when the caller has already read it;
    ``cost``: the turn's own cost, kept with its mark (an undo keeps it counted); ``kept_in``:
    the session that keeps the text of this interrupted turn."""
    env = os.environ if environ is None else environ
    request = plan.request
    mark = None
    if complete and session:
        mark = mark_turn(
            env,
            session,
            request.cwd,
            request.prompt,
            since=started,
            message_id=request.message_id,
            agent=request.agent,
            cost_total=cost_total,
            branch=branch,
        )
    set_mark(path, plan.turn, mark, cost, kept_in)
    snapshot_after(path, plan.turn, env)
    if doc is None:
        try:
            doc = parse(read_text(path))
        except (AgentdocError, DocumentError, FrontmatterError) as exc:
            log.warning("%s: no git commit for turn %d: %s", path, plan.turn, exc)
            return
    if gitsync.sync_on(doc, settings):
        if (why := gitsync.push(path, gitcommit.turn_message(path, plan.turn))) is not None:
            log.warning("%s: turn %d not pushed: %s", path, plan.turn, why)
    elif gitcommit.enabled(doc, settings):
        gitcommit.commit(path, gitcommit.turn_message(path, plan.turn))
