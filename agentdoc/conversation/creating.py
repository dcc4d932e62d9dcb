"""`agentdoc new`: a fresh session document, ready for its first prompt under `## User`.

Here rather than in the command line, since the web page's New document makes the same file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdoc.agents import resolve_agent
from agentdoc.config import load_settings
from agentdoc.document import add_frontmatter
from agentdoc.errors import AgentdocError
from agentdoc.turn import load_preset


def create_document(
    path: Path,
    *,
    title: str | None = None,
    model: str | None = None,
    agent: str | None = None,
    preset: str | None = None,
) -> None:
    """Write a new session document at `path`; refused (AgentdocError) if it exists."""
    if agent is not None:
        resolve_agent(agent, load_settings())
    if preset is not None:
        load_preset(preset)  # refused here, before a document names a preset that cannot work
    if path.exists():
        raise AgentdocError(f"{path} already exists; agentdoc will not overwrite it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # `agentdoc new notes/x.md` just works
    except OSError as exc:
        raise AgentdocError(f"cannot create the folder {path.parent}: {exc.strerror}") from exc
    title = title or path.stem.replace("-", " ").replace("_", " ").strip() or "Conversation"
    meta: dict[str, Any] = {"agent": agent} if agent else {}
    if model:
        meta["model"] = model
    if preset:
        meta["preset"] = preset
    body = f"\n# {title}\n\n## User\n\n"
    text = add_frontmatter(body, meta, {"title": title})
    try:
        with path.open("x", encoding="utf-8") as out:  # never over a file made meanwhile
            out.write(text)
    except FileExistsError as exc:
        raise AgentdocError(f"{path} already exists; agentdoc will not overwrite it") from exc
