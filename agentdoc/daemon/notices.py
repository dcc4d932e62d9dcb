"""What the daemon tells about a document it does not answer, and the checks behind it.

Someone running `agentdoc watch` as a service sees only the editor: a prompt held back, an
agent that cannot start, a document replaced mid-reply must show in the status file (and so
in `agentdoc status` and an editor's status line), not only in the daemon's log.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from agentdoc.agents import find_program, resolve_agent, resolve_executable
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError
from agentdoc.turn import Status, now_iso, read_status, write_status


def hold(path: Path, why: str) -> None:
    """A prompt not sent, and why (with how to send it), in the document's status."""
    shown = read_status(path) or Status(document=path.name, state="idle", updated="")
    write_status(
        path,
        shown.model_copy(
            update={"state": "pending", "pid": None, "held": why, "updated": now_iso()}
        ),
    )


def agent_problems(settings: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """What keeps the default agent (the one for documents that name none) from starting; an
    agent a document names is checked when its turn starts, and told in that document."""
    try:
        agent = resolve_agent(None, settings)
        if agent.protocol == "claude":
            resolve_executable(agent.command[0])  # its messages say how to install it
        else:
            find_program(agent, os.environ if environ is None else environ)
    except AgentdocError as exc:
        return [f"agent {settings.agent!r}: {exc}"]
    return []


def replaced(text: str, prompt: str | None) -> bool:
    """Whether `text` is another document than the one whose `prompt` was being answered: a
    user who cancels by deleting the reply keeps their prompt, a new file does not hold it."""
    wanted = (prompt or "").strip()
    return bool(wanted) and wanted not in text
