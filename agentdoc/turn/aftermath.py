"""What follows a turn whose reply is in the document: its mark, and the git commit if on."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from agentdoc.agents import mark_turn
from agentdoc.config import Settings
from agentdoc.document import DocumentError, FrontmatterError, parse, read_text
from agentdoc.errors import AgentdocError
from agentdoc.turn import gitcommit, marks

log = logging.getLogger(__name__)


def after_turn(
    path: Path,
    settings: Settings,
    environ: Mapping[str, str] | None,
    *,
    turn: int,
    session: str | None,
    cwd: Path,
    prompt: str,
    message_id: str | None,
    since: datetime,
    complete: bool,
) -> None:
    """Record where ``turn`` ended in its session (only a complete one), then commit if on."""
    env = os.environ if environ is None else environ
    mark = None
    if complete and session:
        mark = mark_turn(env, session, cwd, prompt, since=since, message_id=message_id)
    marks.set_mark(path, turn, mark)
    try:
        doc = parse(read_text(path))
    except (AgentdocError, DocumentError, FrontmatterError) as exc:
        log.warning("%s: no git commit for turn %d: %s", path, turn, exc)
        return
    if gitcommit.enabled(doc, settings):
        gitcommit.commit(path, gitcommit.turn_message(path, turn))
