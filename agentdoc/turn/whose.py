"""Whose turn and whose session: the document's agent, and the agent its stored session is of.

A document names its agent (``agent:``) and records whose session ``session`` is
(``session_agent``; when absent, the session predates other agents: `LEGACY_AGENT`'s); when
they differ, the new agent starts afresh. What a turn may do with a session is the agent's
to say (`Agent.can`, `Agent.sessions`), never a protocol's name.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.agents import LEGACY_AGENT, Agent, AgentSpec, agent_named, resolve_agent
from agentdoc.config import Settings
from agentdoc.document import Document


def agent_of(agent: AgentSpec | None) -> Agent:
    """What the agent can do (no spec: the agent of documents that name none, as ever)."""
    return agent_named(LEGACY_AGENT) if agent is None else agent.agent


def name_of(agent: AgentSpec | None) -> str:
    return LEGACY_AGENT if agent is None else agent.name


def drives_session(agent: AgentSpec | None) -> bool:
    """The agent keeps sessions agentdoc can look up, and continues one at any turn: agentdoc
    plans the session (its id, where it resumes) rather than asking the agent to."""
    can = agent_of(agent)
    return can.sessions is not None and can.can.resumes_at


def check_agent(path: Path, doc: Document, settings: Settings) -> AgentSpec:
    """The document's agent; refused, before anything runs or the document changes, if it is
    not a configured agent's name (a document names an agent, never a command)."""
    return resolve_agent(doc.meta.agent, settings, where=str(path))


def session_owner(doc: Document) -> str:
    """The agent whose session ``agentdoc.session`` is."""
    return doc.meta.session_agent or LEGACY_AGENT


def switch_note(doc: Document, agent: AgentSpec | None) -> str | None:
    """Set when the document's session is another agent's: the new agent starts afresh."""
    name = name_of(agent)
    owner = session_owner(doc)
    if not doc.meta.session or owner == name:
        return None
    return f"new {name} session, sent the conversation so far (it was with {owner})"
