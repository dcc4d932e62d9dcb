"""One conversation turn: which session, what is sent, how it streams, status, journal, recovery.

:class:`TurnRunner` runs a turn end to end; the rest keeps the state around it (status files,
the journal, start-up recovery, forks). Other packages import the names in ``__all__`` from here.

Names are imported on first use, so a command that needs one part (`agentdoc status`
reads a status file) does not pay for loading all of them.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdoc.turn.detect import submission, wants_marker
    from agentdoc.turn.forking import fork
    from agentdoc.turn.recovery import recover
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

_MODULE_OF = {
    "submission": "agentdoc.turn.detect",
    "wants_marker": "agentdoc.turn.detect",
    "fork": "agentdoc.turn.forking",
    "recover": "agentdoc.turn.recovery",
    "Progress": "agentdoc.turn.runner",
    "TurnOutcome": "agentdoc.turn.runner",
    "TurnRunner": "agentdoc.turn.runner",
    "Mode": "agentdoc.turn.session",
    "Status": "agentdoc.turn.status",
    "all_statuses": "agentdoc.turn.status",
    "clear_dead_turn": "agentdoc.turn.status",
    "live_turn": "agentdoc.turn.status",
    "now_iso": "agentdoc.turn.status",
    "read_status": "agentdoc.turn.status",
    "request_cancel": "agentdoc.turn.status",
    "write_status": "agentdoc.turn.status",
}

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
    "read_status",
    "recover",
    "request_cancel",
    "submission",
    "wants_marker",
    "write_status",
]


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
