"""Every ACP agent as an `Agent`: what the protocol lets agentdoc count on.

An ACP agent chooses its own session ids and keeps its sessions where only it can read them:
agentdoc asks the agent (`session/load`, `session/resume`) rather than looking. What one
agent advertises beyond that (fork, config options) is known once its process has answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

from agentdoc.agents.acp.checks import check
from agentdoc.agents.acp.inspect import known
from agentdoc.agents.acp.launch import start, warm
from agentdoc.agents.acp.probe import find_command
from agentdoc.agents.base.agent import Agent, Capabilities
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.failure import classify_with
from agentdoc.agents.base.marks import TurnMark
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError


class ForkedSessions:
    """A turn's point is a copy of the session the agent made right after it (`session/fork`,
    where the agent offers it): forking that copy continues the conversation from there."""

    def mark_turn(
        self,
        environ: Mapping[str, str],
        session: str,
        cwd: Path,
        prompt: str,
        since: datetime,
        message_id: str | None,
        branch: str | None,
    ) -> str | None:
        return branch

    def branch_point(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[str, str] | None:
        return mark.start, mark.start  # the copy, forked at its own end

    def unrestorable(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[bool, list[str]] | None:
        return None  # ACP does not say which files a turn's tools changed

    def restore_files(
        self, settings: Settings, environ: Mapping[str, str], mark: TurnMark, clearance: Clearance
    ) -> None:
        raise AgentdocError(f"{mark.agent} cannot take back what its tools changed")


def _recognises(_cmdline: bytes) -> bool:
    # Its command is the user's: nothing in it says the process is one agentdoc started.
    return False


ACP = Agent(
    protocol="acp",
    can=Capabilities(),
    # The user's permission policy (from their config, never a document) becomes the agent's mode.
    start=lambda request, command, env, settings, environ: start(
        request, command, env, environ, settings.permission_mode
    ),
    warm=lambda request, command, env, settings, environ: warm(
        request, command, env, environ, settings.permission_mode
    ),
    find_program=find_command,
    classify=classify_with,
    recognises=_recognises,
    known=known,
    check=check,
    history=ForkedSessions(),
)
