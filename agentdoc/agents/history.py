"""History operations that depend on the agent: marking a turn, branching and rewinding there.

An agent that cannot branch its session at a turn or restore its tools' file changes simply has
no marks: a fork at an earlier turn then gets a seeded session, and `undo` refuses to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentdoc.agents.base import TurnMark
from agentdoc.agents.claude import (
    changes_files,
    files_unrestorable,
    rewind_files,
    session_prompt,
    session_turn,
)
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

CLAUDE = "claude"
SLACK = timedelta(seconds=2)


def mark_turn(
    environ: Mapping[str, str],
    session: str,
    cwd: Path,
    prompt: str,
    *,
    since: datetime,
    message_id: str | None = None,
    agent: str = CLAUDE,
) -> TurnMark | None:
    """The mark of the turn started at ``since`` that just ended in ``session`` with ``prompt``.

    A one-shot CLI has written its whole session file when it exits, so the prompt's record is
    found there. A warm CLI writes its file a little later, but it recorded the prompt under
    ``message_id``, the id the request chose.
    """
    if agent != CLAUDE:
        return None
    # A little slack: the CLI stamps the record after we noted the start.
    iso = (since - SLACK).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    start = session_prompt(environ, session, cwd, prompt, iso) or message_id
    return None if start is None else TurnMark(session, start, agent)


def branch_point(environ: Mapping[str, str], mark: TurnMark, cwd: Path) -> str | None:
    """Where a copy of the session that ends with the marked turn ends (None: cannot tell)."""
    if mark.agent != CLAUDE:
        return None
    found = session_turn(environ, mark.session, cwd, mark.start)
    return None if found is None else found.end


def unrestorable(
    environ: Mapping[str, str], mark: TurnMark, cwd: Path
) -> tuple[bool, list[str]] | None:
    """Whether the marked turn changed files, and why they cannot all be restored exactly;
    None if the session does not hold the turn (then the mark says nothing)."""
    if mark.agent != CLAUDE:
        return None
    found = session_turn(environ, mark.session, cwd, mark.start)
    if found is None:
        return None
    return changes_files(found), files_unrestorable(found, cwd)


def restore_files(
    settings: Settings,
    environ: Mapping[str, str],
    mark: TurnMark,
    cwd: Path,
) -> None:
    """Put the files the marked turn's tools changed back as they were before it."""
    if mark.agent != CLAUDE:
        raise AgentdocError(f"{mark.agent} cannot take back what its tools changed")
    rewind_files(settings, environ, mark.session, mark.start, cwd)
