"""What a failed turn could not leave right, mended as soon as it can be, without a save.

A turn whose writes failed (a full disk, a document made read-only) leaves its reply region open
and may leave its status file saying `streaming`: neither could be written at the time. The
daemon owes such a document a close. It tries again whenever the file changes (an attribute
change such as `chmod` included) and, for a disk that is freed without any event, every
`interval` seconds, until both the close and the status are written. A status file found saying
`streaming` for a process that has ended (a killed daemon, a folder moved mid-reply) is
corrected the same way.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from agentdoc.document import WriteLedger, read_text
from agentdoc.errors import AgentdocError
from agentdoc.records import clear_dead_turn, live_turn, open_regions, recover

log = logging.getLogger(__name__)


class Repairs:
    """The documents owed a close (or a status), each with the failure that left it open."""

    def __init__(self, ledger: WriteLedger, interval: float) -> None:
        self.ledger = ledger
        self.interval = interval
        self._owed: dict[Path, str | None] = {}
        self._next = time.monotonic() + interval

    def owe(self, path: Path, error: str | None) -> None:
        self._owed[path] = error or self._owed.get(path)

    def owes(self, path: Path) -> bool:
        return path in self._owed

    def forget(self, path: Path) -> None:
        self._owed.pop(path, None)

    def pending(self) -> bool:
        return bool(self._owed)

    def due(self) -> list[Path]:
        """The documents to try again now (the periodic fallback)."""
        if not self._owed or time.monotonic() < self._next:
            return []
        self._next = time.monotonic() + self.interval
        return list(self._owed)

    def mend(self, path: Path) -> bool:
        """Close the replies no turn owns and correct a stale status; True if the document
        changed. What still cannot be written stays owed."""
        error = self._owed.pop(path, None)
        try:
            changed = _close_open(path, self.ledger)
        except AgentdocError as exc:
            if not path.exists():
                return False  # gone: nothing left to close
            log.info("%s: cannot close the open reply yet: %s", path, exc)
            self._owed[path] = error
            return False
        if not clear_dead_turn(path, _told(error) if error else None):
            self._owed[path] = error
        return changed


def _close_open(path: Path, ledger: WriteLedger) -> bool:
    if not open_regions(read_text(path)) or live_turn(path) is not None:
        return False  # nothing open, or another live process streams into it
    return recover(path, ledger)


def _told(error: str) -> str:
    return f"{error} (the reply was closed as interrupted once the file could be written)"
