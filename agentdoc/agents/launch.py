"""The one place that maps an agent's name to the protocol that speaks to it.

A document names an agent, never a command: the registry turns the name into the agent's
entry (its protocol, and the command and environment from the user's config), and a name it
does not know is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentdoc.agents.acp import start_acp, warm_acp
from agentdoc.agents.base import AgentRequest, AgentTurn, WarmStart
from agentdoc.agents.claude import start_claude, warm_claude
from agentdoc.agents.registry import AgentSpec, resolve_agent
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

Environ = Mapping[str, str] | None


@dataclass(frozen=True)
class Launch:
    """How a protocol package starts an agent: for one turn, or warm for many."""

    start: Callable[[AgentRequest, AgentSpec, Settings, Environ], AgentTurn]
    warm: Callable[[AgentRequest, AgentSpec, Settings, Environ], WarmStart]


# Protocol → how to start it. Claude Code speaks its own stream-json (its argv is agentdoc's
# to build, from the settings); every other agent speaks ACP with the command of its entry.
_PROTOCOLS: dict[str, Launch] = {
    "claude": Launch(
        lambda request, _spec, settings, environ: start_claude(request, settings, environ),
        lambda request, _spec, settings, environ: warm_claude(request, settings, environ),
    ),
    "acp": Launch(
        lambda request, spec, settings, environ: start_acp(
            request, spec.command, spec.env, environ, settings.permission_mode
        ),
        lambda request, spec, settings, environ: warm_acp(
            request, spec.command, spec.env, environ, settings.permission_mode
        ),
    ),
}


class UnknownAgent(AgentdocError):
    """The request names an agent no protocol here speaks to."""


def protocol(request: AgentRequest, settings: Settings) -> tuple[Launch, AgentSpec]:
    spec = resolve_agent(request.agent, settings)
    found = _PROTOCOLS.get(spec.protocol)
    if found is None:
        raise UnknownAgent(
            f"agent {spec.name!r} speaks {spec.protocol!r}, which agentdoc cannot run"
        )
    return found, spec


def start_turn(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> AgentTurn:
    """Start a fresh agent process for one turn."""
    launch, spec = protocol(request, settings)
    return launch.start(request, spec, settings, environ)


def prepare_warm(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> WarmStart:
    """A warm process for ``request``, keyed but not yet started (the pool may reuse one)."""
    launch, spec = protocol(request, settings)
    return launch.warm(request, spec, settings, environ)
