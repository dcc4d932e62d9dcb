"""What the daemon tells about a document it does not answer, and the checks behind it.

Someone running `agentdoc watch` as a service sees only the editor: a prompt held back, an
agent that cannot start, a document replaced mid-reply must show in the status file (and so
in `agentdoc status` and an editor's status line), not only in the daemon's log.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.agents import resolve_executable
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


def agent_problems(settings: Settings) -> list[str]:
    """What keeps the configured agents from starting, one message each (today the one Claude
    Code CLI; an agent named per document adds its own check here)."""
    try:
        resolve_executable(settings.claude)
    except AgentdocError as exc:
        return [str(exc)]
    return []


def replaced(text: str, prompt: str | None) -> bool:
    """Whether `text` is another document than the one whose `prompt` was being answered: a
    user who cancels by deleting the reply keeps their prompt, a new file does not hold it."""
    wanted = (prompt or "").strip()
    return bool(wanted) and wanted not in text
