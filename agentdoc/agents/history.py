"""History operations that depend on the agent: marking a turn, branching and rewinding there.

A mark names the agent whose session it is; that agent's protocol says whether it can. An
agent that cannot branch its session at a turn or restore its tools' file changes simply has
no marks: a fork at an earlier turn then gets a seeded session, and `undo` refuses to guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.registry import agent_named
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError


def mark_turn(
    environ: Mapping[str, str],
    session: str,
    cwd: Path,
    prompt: str,
    *,
    since: datetime,
    agent: str,
    message_id: str | None = None,
    cost_total: float | None = None,
    branch: str | None = None,
) -> TurnMark | None:
    """The mark of the turn started at ``since`` that just ended in ``session`` with ``prompt``."""
    history = agent_named(agent).history
    if history is None:
        return None
    start = history.mark_turn(environ, session, cwd, prompt, since, message_id, branch)
    return None if start is None else TurnMark(session, start, agent, cost_total)


def branch_point(environ: Mapping[str, str], mark: TurnMark, cwd: Path) -> tuple[str, str] | None:
    """The session to fork to continue right after the marked turn, and where in it the copy
    ends (the session's own id: at its end); None: cannot tell."""
    history = agent_named(mark.agent).history
    return None if history is None else history.branch_point(environ, mark, cwd)


def unrestorable(
    environ: Mapping[str, str], mark: TurnMark, cwd: Path
) -> tuple[bool, list[str]] | None:
    """Whether the marked turn changed files, and why they cannot all be restored exactly;
    None if the session does not hold the turn (then the mark says nothing)."""
    history = agent_named(mark.agent).history
    return None if history is None else history.unrestorable(environ, mark, cwd)


def restore_files(
    settings: Settings,
    environ: Mapping[str, str],
    mark: TurnMark,
    clearance: Clearance,
) -> None:
    """Put the files the marked turn's tools changed back as they were before it."""
    history = agent_named(mark.agent).history
    if history is None:
        raise AgentdocError(f"{mark.agent} cannot take back what its tools changed")
    history.restore_files(settings, environ, mark, clearance)
