"""After a crash: close reply regions that no running turn owns.

A turn killed mid-reply (daemon or CLI killed, machine lost power) leaves its streaming markers
in the document, with the partial text between them. Closing them keeps that text, marks it
interrupted, and adds a fresh ``## User`` heading. The prompt then has an ``## Assistant`` block,
so it is not pending and is never sent again on its own: the user decides by saving a new prompt.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import signal
from collections.abc import Mapping
from pathlib import Path

from agentdoc.document import (
    ReplyMarkers,
    WriteLedger,
    read_text,
    seal_reply,
    write_text,
)
from agentdoc.records import journal

log = logging.getLogger(__name__)

_ANY_START = re.compile(r"<!-- agentdoc:reply ([0-9a-f]+) ")

INTERRUPTED = (
    "> [!WARNING]\n"
    "> **The reply was interrupted** (agentdoc or the agent stopped before it finished). "
    "The text above is partial, and the agent will not remember it.\n"
    "> Write your next prompt below, or ask again to get a complete answer."
)


def open_regions(text: str) -> list[str]:
    """Nonces of every reply region still marked as streaming in `text`."""
    return [m.group(1) for m in _ANY_START.finditer(text) if ReplyMarkers(m.group(1)).find(text)]


def close_orphans(
    text: str, owned: frozenset[str] = frozenset(), entry: journal.Entry | None = None
) -> str:
    for nonce in open_regions(text):
        markers = ReplyMarkers(nonce)
        region = markers.find(text)
        if nonce in owned or region is None:
            continue
        body = text[region.content_start : region.content_end]
        # The region text is already in the document's newline style; render in LF for splice.
        partial = body.replace("\r\n", "\n").rstrip("\n")
        if entry is not None and entry.nonce == nonce and "<details>" not in partial:
            # The journal may hold text that arrived after the last write to the document.
            journaled = seal_reply(entry.text).rstrip("\n")
            if len(journaled) > len(partial):
                partial = journaled
        final = f"{partial}\n\n{INTERRUPTED}" if partial.strip() else INTERRUPTED
        closed = markers.close(text, final, partial)
        if closed is not None:
            text = closed
    return text


def recover(path: Path, ledger: WriteLedger, owned: frozenset[str] = frozenset()) -> bool:
    """Close orphaned regions in the document; True if it was changed."""
    text = read_text(path)
    entry = journal.read_journal(path)
    if entry is not None and entry.pid and entry.nonce not in owned:
        stop_orphan(entry.pid)
    fixed = close_orphans(text, owned, entry)
    if entry is not None and entry.nonce not in owned:
        journal.discard(path)
    if fixed == text:
        return False
    log.warning("%s: closed a reply an interrupted turn left open; marked it interrupted", path)
    write_text(path, fixed, ledger)
    return True


# Every agent agentdoc starts carries this in its environment, naming the agentdoc process that
# started it: how recovery knows an agent of a killed agentdoc from anything else, whatever the
# agent's program and flags. The random part tells a reused pid from the process itself.
MARKER = "AGENTDOC_STARTED_BY"
_TOKEN = secrets.token_hex(6)


def own_marker() -> str:
    return f"{os.getpid()}:{_TOKEN}"


def marked(environ: Mapping[str, str] | None) -> dict[str, str]:
    """The environment to start agents with (`os.environ` when None), with this process's
    marker."""
    env = dict(os.environ if environ is None else environ)
    env[MARKER] = own_marker()
    return env


def started_by(pid: int) -> str | None:
    """The marker of the agentdoc process that started `pid`, if agentdoc started it."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None  # gone, someone else's, or no /proc here
    key = MARKER.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(key):
            return entry[len(key) :].decode(errors="replace")
    return None


def stop_orphan(pid: int) -> None:
    """Stop an agent that outlived the agentdoc process that started it (killed with SIGKILL).

    It runs in its own process group and would otherwise finish its turn (and spend tokens)
    for a reply nobody writes down. Only a process agentdoc's marker says another agentdoc
    process started is stopped: its pid may have been reused since, and an agent this process
    started and still holds (a warm one kept for the document's next turn) is no orphan.
    """
    marker = started_by(pid)
    if marker is None or marker == own_marker():
        return
    log.warning("stopping the agent (pid %s) left running by an interrupted turn", pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
