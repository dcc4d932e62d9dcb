"""Starting a document's agent: the registry names its entry, the entry's protocol starts it.

A document names an agent, never a command: the registry turns the name into the agent's
entry (its protocol, and the command and environment from the user's config), and a name it
does not know is refused before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentdoc.agents.base.process import AgentTurn, WarmStart
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.registry import resolve_agent
from agentdoc.config import Settings


def start_turn(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> AgentTurn:
    """Start a fresh agent process for one turn."""
    spec = resolve_agent(request.agent, settings)
    return spec.agent.start(request, spec.command, spec.env, spec.settings(settings), environ)


def prepare_warm(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> WarmStart:
    """A warm process for ``request``, keyed but not yet started (the pool may reuse one)."""
    spec = resolve_agent(request.agent, settings)
    return spec.agent.warm(request, spec.command, spec.env, spec.settings(settings), environ)
