"""What the daemon tells about a document it does not answer, and the checks behind it.

Someone running `agentdoc watch` as a service sees only the editor: a prompt held back, an
agent that cannot start, a document replaced mid-reply must show in the status file (and so
in `agentdoc status` and an editor's status line), not only in the daemon's log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from agentdoc.agents import find_program, resolve_agent, resolve_executable
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError
from agentdoc.turn import Progress, Status, now_iso, read_status, write_status

log = logging.getLogger(__name__)


def tell_error(path: Path, message: str, on_progress: Callable[[Progress], None]) -> None:
    """One failure, told everywhere someone may look: the log (the daemon's terminal), the
    status file (editors, `agentdoc status`) and the live view."""
    log.error("%s", message, extra={"told": True})  # the live view prints it on a terminal
    if path.parent.is_dir():
        write_status(
            path,
            Status(document=path.name, state="error", error=message, updated=now_iso()),
        )
    on_progress(Progress(path, 0, "failed", 0.0, 0, None, message))


def hold(path: Path, why: str) -> None:
    """A prompt not sent, and why (with how to send it), in the document's status."""
    shown = read_status(path) or Status(document=path.name, state="idle", updated="")
    write_status(
        path,
        shown.model_copy(
            update={"state": "pending", "pid": None, "held": why, "updated": now_iso()}
        ),
    )


def hold_bulk(path: Path, verdict: str) -> None:
    """A pending prompt that came with a bulk change (`verdict` says which), held back."""
    log.warning(
        "%s: changed in bulk (%s); its pending prompt was not sent. Edit the prompt and save, "
        "or run `agentdoc run %s`, to send it",
        path,
        verdict,
        path.name,
    )
    hold(
        path,
        f"not sent: the document changed in bulk ({verdict}); edit the prompt and save, or run "
        f"`agentdoc run {path.name}`, to send it",
    )


def hold_undone(path: Path) -> None:
    """The prompt `agentdoc undo` made pending again: it waits for the person's save (told as
    loudly as a bulk change, for whoever watches the terminal and wonders why)."""
    log.warning(
        "%s: turns taken back by `agentdoc undo`; its pending prompt was not sent. Edit the "
        "prompt and save, or run `agentdoc run %s`, to send it",
        path,
        path.name,
    )
    hold(
        path,
        "taken back by `agentdoc undo`: edit the prompt and save, or run "
        f"`agentdoc run {path.name}`, to send it",
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


def tell_agent_problems(settings: Settings, environ: Mapping[str, str] | None) -> None:
    """Say at start-up that the configured agent cannot run, rather than at the first prompt
    (which then gets the same message in its document)."""
    for problem in agent_problems(settings, environ):
        log.error("%s (agentdoc watch goes on; prompts fail until this is fixed)", problem)


def replaced(text: str, prompt: str | None) -> bool:
    """Whether `text` is another document than the one whose `prompt` was being answered: a
    user who cancels by deleting the reply keeps their prompt, a new file does not hold it."""
    wanted = (prompt or "").strip()
    return bool(wanted) and wanted not in text
