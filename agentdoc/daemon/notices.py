"""What the daemon tells about a document it does not answer, and the checks behind it.

Someone running `agentdoc watch` as a service sees only the editor: a prompt held back, an
agent that cannot start, a document replaced mid-reply must show in the status file (and so
in `agentdoc status` and an editor's status line), not only in the daemon's log.
"""

from __future__ import annotations

import logging
import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from agentdoc.agents import resolve_agent
from agentdoc.config import Settings
from agentdoc.document import (
    WriteLedger,
    dominant_newline,
    parse_archive,
    render_refusal,
    shown_name,
    write_bytes,
    write_text,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import Status, now_iso, read_status, write_status
from agentdoc.turn import Progress

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


def as_argument(name: str) -> str:
    """A file name as it would be typed after `agentdoc run` in a shell: quoted where it must
    be, and after `./` when it starts with a dash (or it would read as an option)."""
    shown = shlex.quote(shown_name(name))
    return f"./{shown}" if shown.startswith("-") else shown


def tell_fault(path: Path | None, exc: Exception, on_progress: Callable[[Progress], None]) -> None:
    """An unexpected error in handling one document (or, with no `path`, in a chore of the
    daemon's own), which goes on: the traceback for a log file, one line for the terminal."""
    if path is None:
        log.error("agentdoc watch: unexpected error: %s (it goes on)", exc, exc_info=exc)
        return
    where = shown_name(str(path))
    # Marked told: the live view prints the line `tell_error` gives, not this traceback.
    log.error("%s: unexpected error", where, exc_info=exc, extra={"told": True})
    try:
        tell_error(
            path, f"{where}: unexpected error: {exc}; it is tried again when saved", on_progress
        )
    except Exception:
        log.exception("%s: the error could not be told in its status", where)


def notice_in_document(path: Path, text: str, message: str, ledger: WriteLedger) -> bool:
    """Say below a waiting prompt why it was not sent (settings that cannot be used), as the
    failure notice a turn refused before sending leaves: the prompt stays pending, and the
    turn that sends it once the settings are fixed replaces the notice. True if written."""
    lenient = parse_archive(text)  # its turns, whatever its settings say
    if lenient.pending_prompt() is None:
        return False
    notice = lenient.unanswered()
    kept = text[: notice.start] if notice is not None else text
    nl = dominant_newline(text)
    refusal = render_refusal(message, as_argument(path.name)).replace("\n", nl)
    new = f"{kept.rstrip()}{nl}{nl}## Assistant{nl}{nl}{refusal}{nl}"
    if new == text:
        return False  # told already, in these words
    displaced = write_text(path, new, ledger, expected=text.encode("utf-8"))
    if displaced is not None:  # a save landed meanwhile: theirs wins, told at its own turn
        write_bytes(path, displaced)
    return True


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
        shown_name(str(path)),
        verdict,
        as_argument(path.name),
    )
    hold(
        path,
        f"not sent: the document changed in bulk ({verdict}); edit the prompt and save, or run "
        f"`agentdoc run {as_argument(path.name)}`, to send it",
    )


def agent_problems(settings: Settings, environ: Mapping[str, str] | None = None) -> list[str]:
    """What keeps the default agent (the one for documents that name none) from starting; an
    agent a document names is checked when its turn starts, and told in that document."""
    try:
        agent = resolve_agent(None, settings)
        agent.agent.find_program(agent.command, os.environ if environ is None else environ)
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


def tell_queued(path: Path, place: int, on_progress: Callable[[Progress], None]) -> None:
    """A due prompt waits for a free turn (`max_concurrent` turns already run), ``place``-th
    in line."""
    queued = Status(document=path.name, state="queued", updated=now_iso(), place=place)
    write_status(path, queued)
    on_progress(Progress(path, 0, "queued", 0.0, 0, None))


def tell_repaired(path: Path) -> None:
    """A document that could not be used is fixed: the error its status said is over."""
    write_status(path, Status(document=path.name, state="idle", updated=now_iso()))
