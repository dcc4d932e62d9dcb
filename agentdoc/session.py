"""Which Claude session a turn goes to, and what prompt it carries (pure).

`start` always opens a new session whose id we choose up front (``--session-id``), so the id is
known even if the turn dies before the CLI prints it. When a new session is opened on a document
that already has history, the prompt carries the document's transcript, because the document,
not the CLI's store, is the source of truth.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentdoc.claude import AgentRequest
from agentdoc.config import Settings
from agentdoc.document import Document
from agentdoc.errors import AgentdocError

Mode = Literal["start", "resume", "run"]


@dataclass(frozen=True)
class TurnPlan:
    request: AgentRequest
    turn: int  # 1-based number of the exchange this turn creates
    new_session: bool


def compose_prompt(prompt: str, transcript: str | None) -> str:
    if not transcript:
        return prompt
    return (
        "This conversation continues one that was kept in a document; your earlier session is "
        "not available. Here is the conversation so far, for context:\n\n"
        f"<transcript>\n{transcript}\n</transcript>\n\n"
        f"Reply to this new message:\n\n{prompt}"
    )


def working_dir(path: Path, doc: Document) -> Path:
    folder = path.parent.absolute()
    if not doc.meta.cwd:
        return folder
    cwd = (folder / doc.meta.cwd).resolve()
    if not cwd.is_dir():
        raise AgentdocError(f"{path}: agentdoc.cwd {doc.meta.cwd!r} is not a folder")
    return cwd


def plan_turn(
    path: Path,
    doc: Document,
    prompt: str,
    mode: Mode,
    settings: Settings,
    *,
    session: str | None = None,
    model: str | None = None,
) -> TurnPlan:
    resume = session or doc.meta.session
    if mode == "resume" and not resume:
        raise AgentdocError(
            f"{path} has no session to resume yet; use `agentdoc start` or `agentdoc run`"
        )
    new_session = mode == "start" or (mode == "run" and not resume)
    turn = doc.turn_count() + 1
    transcript = doc.transcript() if new_session and turn > 1 else None
    request = AgentRequest(
        prompt=compose_prompt(prompt, transcript),
        cwd=working_dir(path, doc),
        resume=None if new_session else resume,
        session_id=str(uuid.uuid4()) if new_session else None,
        model=model or doc.meta.model or settings.model,
        effort=doc.meta.effort or settings.effort,
        append_system=doc.meta.system,
    )
    return TurnPlan(request=request, turn=turn, new_session=new_session)
