"""What the daemon's loop owns: each document's state between saves (`DocState`), and the
`Loop` its parts share.

The loop's thread alone reads and changes them; a turn's thread only reports its end back
through the loop's queue, so no state here is shared between threads.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentdoc.config import Settings
from agentdoc.daemon.events import Deadlines, Event
from agentdoc.document import WriteLedger
from agentdoc.turn import Progress, TurnRunner

if TYPE_CHECKING:  # the parts' own modules import this one
    from agentdoc.daemon.gate import Gate
    from agentdoc.daemon.repair import Repairs

SAVES_KEPT = 8


@dataclass
class DocState:
    seen: str | None = None  # digest of the last content handled
    text: str | None = None  # that content, to tell a typed prompt from a bulk rewrite
    # Recent contents someone else saved (not our own writes): the copies an editor may hold,
    # the bases to merge a save made from one of them with what we wrote since.
    saves: deque[str] = field(default_factory=lambda: deque(maxlen=SAVES_KEPT))
    # A save taken while the turn ran: in `saves` already, but not yet judged as a save.
    queued_save: str | None = None
    thread: threading.Thread | None = None
    runner: TurnRunner | None = None
    cancel: threading.Event | None = None
    queued: bool = False  # a prompt was saved while the turn streamed
    prompt_below: bool = False  # …below the streaming reply: a cancel does not drop it
    prompt: str | None = None  # the prompt of the turn last submitted
    refused: bool = False  # its frontmatter could not be read: the status says why
    indexed: str | None = None  # digest of the version last handed to the search index
    own_taken: str | None = None  # digest of the last `undo`/`archive` version taken in
    locked: bool = False  # its turn was refused for the file's read-only mode
    begun: int = 0  # turns begun, to tell a look asked for before the latest one (`Recheck`)


@dataclass
class Loop:
    """What the parts of the `Daemon` share: the documents' states, the settings as they stand
    now (one place for a change to the config to land), the record of agentdoc's own writes,
    the replies owed a close, the gate, the deadlines the loop keeps and its queue (`put`, the
    one thing another thread may call), and where progress is told."""

    docs: dict[Path, DocState]
    settings: Settings
    ledger: WriteLedger
    repairs: Repairs
    gate: Gate
    deadlines: Deadlines
    put: Callable[[Event], None]
    on_progress: Callable[[Progress], None]

    def after_settling(self, event: Event) -> None:
        """Handle `event` one settle step from now, so a save landing meanwhile settles first."""
        self.deadlines.add(self.settings.settle_step, event)
