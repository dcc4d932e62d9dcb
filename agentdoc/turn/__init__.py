"""One conversation turn: which session, what is sent, how it streams, status, journal, recovery.

:class:`TurnRunner` runs a turn end to end; the rest keeps the state around it (status files,
the journal, start-up recovery, forks). Other packages import the names in ``__all__`` from here.
"""

from agentdoc.turn.detect import submission, wants_marker
from agentdoc.turn.forking import fork
from agentdoc.turn.recovery import open_regions, recover
from agentdoc.turn.runner import Progress, TurnOutcome, TurnRunner
from agentdoc.turn.session import Mode
from agentdoc.turn.status import (
    Status,
    all_statuses,
    clear_dead_turn,
    live_turn,
    now_iso,
    read_status,
    request_cancel,
    write_status,
)

__all__ = [
    "Mode",
    "Progress",
    "Status",
    "TurnOutcome",
    "TurnRunner",
    "all_statuses",
    "clear_dead_turn",
    "fork",
    "live_turn",
    "now_iso",
    "open_regions",
    "read_status",
    "recover",
    "request_cancel",
    "submission",
    "wants_marker",
    "write_status",
]
