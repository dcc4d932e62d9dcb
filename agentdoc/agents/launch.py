"""The one place that maps an agent's name to the protocol that speaks to it.

A document names an agent, never a command; a name this table does not know is refused before
anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentdoc.agents.base import AgentRequest, AgentTurn, WarmStart
from agentdoc.agents.claude import start_claude, warm_claude
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

Environ = Mapping[str, str] | None


@dataclass(frozen=True)
class Launch:
    """How a protocol package starts an agent: for one turn, or warm for many."""

    start: Callable[[AgentRequest, Settings, Environ], AgentTurn]
    warm: Callable[[AgentRequest, Settings, Environ], WarmStart]


# Agent name → protocol. Claude Code speaks its own stream-json; the ACP agents go here too.
_PROTOCOLS: dict[str, Launch] = {"claude": Launch(start_claude, warm_claude)}


class UnknownAgent(AgentdocError):
    """The request names an agent no protocol here speaks to."""


def protocol(agent: str) -> Launch:
    found = _PROTOCOLS.get(agent)
    if found is None:
        known = ", ".join(sorted(_PROTOCOLS))
        raise UnknownAgent(f"unknown agent {agent!r}; the agents agentdoc knows: {known}")
    return found


def start_turn(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> AgentTurn:
    """Start a fresh agent process for one turn."""
    return protocol(request.agent).start(request, settings, environ)


def prepare_warm(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> WarmStart:
    """A warm process for ``request``, keyed but not yet started (the pool may reuse one)."""
    return protocol(request.agent).warm(request, settings, environ)
