"""A save made from a copy older than agentdoc's last write, and the merge that keeps both.

Plain Vim without a reload recipe, an editor that never reloads, a phone whose sync tool lags:
each can save the copy it loaded before agentdoc wrote a reply, which would delete the reply and
the `session:` key. Such a save is recognised because it holds none of the lines agentdoc wrote
since the person's last save, and it is merged with :func:`merge_document` (base: that last save,
the copy the editor had), like an edit made while a reply streamed. A version git checked out
is not merged (gitguard holds it), nor is a save that kept any of agentdoc's new lines: that
editor had reloaded, and what it lacks the person removed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from agentdoc.daemon.state import DocState
from agentdoc.daemon.synced.gitguard import written_by_git
from agentdoc.document import (
    Merged,
    WriteLedger,
    digest,
    merge_document,
    write_bytes,
    write_text,
)

log = logging.getLogger(__name__)


def stale_merge(saves: Sequence[str], ours: str | None, saved: str) -> Merged | None:
    """The merge to write when `saved` was made from one of the person's earlier `saves` rather
    than from our later `ours`; None for an ordinary save (made from `ours`, or nothing of ours
    came since)."""
    if ours is None or saved == ours:
        return None
    if ours.endswith("\n") and saved.startswith(ours):
        # Made from ours (a prompt typed below the reply, the usual save): it has every line
        # of ours, so nothing of ours can be missing from it. No look at a long document.
        return None
    if not saves:
        return None
    # The copy the save was made from: itself when the person saved it before (an editor
    # writing its unchanged buffer again), else their last save.
    base = saved if saved in saves else saves[-1]
    if base == ours:
        return None
    # What we wrote since, apart from what the person saved (typed text we merged in). The
    # sets are of all stripped lines (built at C speed: a long conversation has tens of
    # thousands); only the few lines that differ are filtered to the telling ones.
    ours_new = _telling(_lines(ours).difference(*(_lines(s) for s in saves)))
    if not ours_new or ours_new & _lines(saved):
        return None
    return merge_document(base, ours, saved)


def _lines(text: str) -> set[str]:
    return set(map(str.strip, text.splitlines()))


def _telling(lines: set[str]) -> set[str]:
    """Lines that identify a version: not blank, and not a bare heading a person also types."""
    return {line for line in lines if line and not _bare_heading(line)}


def _bare_heading(line: str) -> bool:
    return line.startswith("#") and len(line.split()) <= 2


def rebase_save(
    path: Path, doc: DocState, previous: str | None, text: str, data: bytes, ledger: WriteLedger
) -> str | None:
    """`text` as saved, or merged with our writes when it was saved from an older copy (the
    merge is written); None when another save landed meanwhile (its own event follows)."""
    earlier = list(doc.saves)
    if text == doc.queued_save:
        # Recorded when it landed during the turn, it is no earlier save of the person's: as a
        # base it would make whatever they typed into it look like something we removed.
        earlier.reverse()
        earlier.remove(text)
        earlier.reverse()
    doc.queued_save = None
    merged = stale_merge(earlier, previous, text)
    doc.saves.append(text)  # the copy the person's editor holds now
    if merged is None or written_by_git(path, data):
        return text
    displaced = write_text(path, merged.text, ledger, expected=data)
    if displaced is not None:
        write_bytes(path, displaced)  # theirs again, and seen as the save it is
        return None
    if merged.clean:
        log.info("%s: saved from a copy older than the reply; merged, the reply kept", path)
    else:
        log.warning(
            "%s: saved from a copy older than the reply; merged, but a line you removed "
            "where the reply was written is still there",
            path,
        )
    doc.seen, doc.text = digest(merged.text.encode("utf-8")), merged.text
    return merged.text
