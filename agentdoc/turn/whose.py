"""Whose turn and whose session: the document's agent, and the agent its stored session is of.

A document names its agent (``agent:``) and records whose session ``session`` is
(``session_agent``, Claude's when absent); when they differ, the new agent starts afresh.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.agents import AgentSpec, resolve_agent
from agentdoc.config import Settings
from agentdoc.document import Document


def native(agent: AgentSpec | None) -> bool:
    """Claude: its sessions are files agentdoc can look up, its new ones get our ids."""
    return agent is None or agent.protocol == "claude"


def check_agent(path: Path, doc: Document, settings: Settings) -> AgentSpec:
    """The document's agent; refused, before anything runs or the document changes, if it is
    not a configured agent's name (a document names an agent, never a command)."""
    return resolve_agent(doc.meta.agent, settings, where=str(path))


def session_owner(doc: Document) -> str:
    """The agent whose session ``agentdoc.session`` is (Claude's when not said)."""
    return doc.meta.session_agent or "claude"


def switch_note(doc: Document, agent: AgentSpec | None) -> str | None:
    """Set when the document's session is another agent's: the new agent starts afresh."""
    name = agent.name if agent else "claude"
    owner = session_owner(doc)
    if not doc.meta.session or owner == name:
        return None
    return f"new {name} session, sent the conversation so far (it was with {owner})"
