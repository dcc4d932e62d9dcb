"""History operations that depend on the agent: marking a turn, taking its file changes back.

An agent that cannot branch its session at a turn or restore its tools' file changes simply has
no marks: a fork at an earlier turn then gets a seeded session, and `undo` refuses to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentdoc.agents.base import TurnMark
from agentdoc.agents.claude import (
    changes_files,
    files_unrestorable,
    rewind_files,
    session_last_turn,
    session_turn,
)
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

CLAUDE = "claude"


def mark_turn(
    environ: Mapping[str, str], session: str, cwd: Path, prompt: str, agent: str = CLAUDE
) -> TurnMark | None:
    """The mark of the turn that just ended in ``session`` with ``prompt`` (None: unknown)."""
    if agent != CLAUDE:
        return None
    found = session_last_turn(environ, session, cwd, prompt)
    return None if found is None else TurnMark(session, found.end, found.prompt)


def unrestorable(
    environ: Mapping[str, str], mark: TurnMark, cwd: Path, agent: str = CLAUDE
) -> tuple[bool, list[str]]:
    """Whether the marked turn changed files, and why they cannot all be restored exactly."""
    if agent != CLAUDE or mark.start is None:
        return True, [f"{agent} cannot take back what its tools changed"]
    found = session_turn(environ, mark.session, cwd, mark.end)
    if found is None or found.prompt != mark.start:
        return True, [f"the turn is no longer in the {agent} session {mark.session}"]
    return changes_files(found), files_unrestorable(found, cwd)


def restore_files(
    settings: Settings,
    environ: Mapping[str, str],
    mark: TurnMark,
    cwd: Path,
    agent: str = CLAUDE,
) -> None:
    """Put the files the marked turn's tools changed back as they were before it."""
    if agent != CLAUDE or mark.start is None:
        raise AgentdocError(f"{agent} cannot take back what its tools changed")
    rewind_files(settings, environ, mark.session, mark.start, cwd)
