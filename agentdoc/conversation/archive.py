"""``agentdoc archive``: move a long conversation's older exchanges into its archive file.

The session goes on as it was: nothing is sent, the history snapshot still matches (the
conversation's history is the archive's exchanges followed by the document's), and a rebuilt
session gets the archived exchanges in its transcript. The archive is written first and the
document second, with the count of archived exchanges in the document's frontmatter as the
commit: a run that dies in between leaves extra exchanges at the end of the archive, which the
next run drops (the document still holds them).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from agentdoc.document import (
    HEADER_START,
    STREAMING_MARK,
    DocumentError,
    FrontmatterError,
    Moved,
    archive_path,
    atomic_write,
    move,
    parse,
    read_text,
    set_meta,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import forget as forget_snapshots
from agentdoc.records import live_turn, note_own_write

log = logging.getLogger(__name__)

DEFAULT_KEEP = 3
# An unanswered approval block (an answered one is a single line without this marker).
_APPROVAL = re.compile(r"<!-- agentdoc:approval \S+ \(tick one box and save\) -->")


def refuse_busy(path: Path, text: str) -> None:
    """A reply streaming into the document or waiting for an approval is left alone."""
    if _APPROVAL.search(text):
        raise AgentdocError(
            f"{path}: a tool permission request waits for your answer; answer it "
            "(`agentdoc approve` / `deny`), then archive once the turn has finished"
        )
    if STREAMING_MARK in text or live_turn(path) is not None:
        raise AgentdocError(f"{path}: a reply is streaming into it; archive it once it finished")


def _existing(path: Path, target: Path) -> str | None:
    if not target.exists():
        return None
    text = read_text(target)
    if not text.startswith(HEADER_START):
        raise AgentdocError(
            f"{target} exists but is not {path.name}'s archive; move it away to archive {path}"
        )
    return text


def archive_document(path: Path, keep: int = DEFAULT_KEEP) -> Moved:
    """Move all but the last ``keep`` exchanges of ``path`` into its archive file."""
    if keep < 0:
        raise AgentdocError("--keep must be 0 or more")
    text = read_text(path)
    try:
        doc = parse(text)
    except (DocumentError, FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc
    refuse_busy(path, text)
    target = archive_path(path)
    moved = move(doc, keep, path.name, _existing(path, target))
    if moved is None:
        raise AgentdocError(
            f"{path}: nothing to archive: it holds {doc.turn_count() - (doc.meta.archived or 0)}"
            f" exchange(s) and --keep is {keep}"
        )
    atomic_write(target, moved.archive.encode("utf-8"))
    new = set_meta(moved.document, {"archived": moved.archived}).encode("utf-8")
    note_own_write(path, new, "archive", text.encode("utf-8"))
    displaced = atomic_write(path, new, expected=text.encode("utf-8"))
    if displaced is not None:
        # A save landed meanwhile: it wins, and the archive's extra exchanges are not counted.
        atomic_write(path, displaced)
        raise AgentdocError(f"{path} changed while it was archived; nothing moved, try again")
    # Archived turns can no longer be undone: their file snapshots go with them.
    forget_snapshots(path, range(1, moved.archived + 1))
    log.info("archived %d exchange(s) of %s into %s", moved.moved, path, target)
    return moved
