"""The agent a document's next turn would use, and what it is set to: for `agentdoc status`.

Read from the document (its preset under it) and the user's config, plus what this machine
remembers the agent offered; no agent is started.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from agentdoc.config import Settings, load_settings
from agentdoc.errors import AgentdocError

if TYPE_CHECKING:
    from agentdoc.agents import SessionOptions

log = logging.getLogger(__name__)


def user_settings() -> Settings | str:
    """The user's config, or what is wrong with it (status still tells the documents' state)."""
    try:
        return load_settings()
    except AgentdocError as exc:
        return str(exc)


def options_of(path: Path, settings: Settings | str) -> SessionOptions | str:
    """The document's agent options, or why they cannot be told (a broken config, a document
    agentdoc cannot read, an agent nobody configured, a preset that is gone)."""
    if isinstance(settings, str):
        return settings
    # Only when there is a document to tell of: a bare `status` stays quick.
    from agentdoc.agents import resolve_agent, session_options
    from agentdoc.document import DocumentError, FrontmatterError, parse, read_text
    from agentdoc.turn import apply_preset

    try:
        doc, _include = apply_preset(parse(read_text(path)))
        spec = resolve_agent(doc.meta.agent, settings)
    except (OSError, DocumentError, FrontmatterError, AgentdocError) as exc:
        log.debug("%s: no agent options: %s", path, exc)
        return str(exc)
    return session_options(spec, settings, doc.meta.model, doc.meta.effort)
