"""One conversation turn: which session, what is sent, how it streams, status, journal, recovery.

:class:`TurnRunner` runs a turn end to end; the rest keeps the state around it (status files,
the journal, start-up recovery, forks). Other packages import the names in ``__all__`` from
here; each loads its submodule on first use (see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.turn.approvals import request_answer as request_answer
    from agentdoc.turn.archive import archive_document as archive_document
    from agentdoc.turn.creating import create_document as create_document
    from agentdoc.turn.detect import submission as submission
    from agentdoc.turn.detect import wants_marker as wants_marker
    from agentdoc.turn.forking import fork as fork
    from agentdoc.turn.gitsync import behind as behind
    from agentdoc.turn.gitsync import integrate as integrate
    from agentdoc.turn.gitsync import sync_on as sync_on
    from agentdoc.turn.gitsync import toplevel as toplevel
    from agentdoc.turn.marks import Spent as Spent
    from agentdoc.turn.marks import read_marks as read_marks
    from agentdoc.turn.marks import spent as spent
    from agentdoc.turn.outcome import Progress as Progress
    from agentdoc.turn.outcome import TurnOutcome as TurnOutcome
    from agentdoc.turn.presets import apply_preset as apply_preset
    from agentdoc.turn.presets import list_presets as list_presets
    from agentdoc.turn.presets import load_preset as load_preset
    from agentdoc.turn.presets import presets_dir as presets_dir
    from agentdoc.turn.recovery import marked as marked
    from agentdoc.turn.recovery import open_regions as open_regions
    from agentdoc.turn.recovery import recover as recover
    from agentdoc.turn.runner import Clearer as Clearer
    from agentdoc.turn.runner import TurnRunner as TurnRunner
    from agentdoc.turn.session import Mode as Mode
    from agentdoc.turn.session import prepare_turn as prepare_turn
    from agentdoc.turn.status import Status as Status
    from agentdoc.turn.status import all_statuses as all_statuses
    from agentdoc.turn.status import as_found as as_found
    from agentdoc.turn.status import clear_dead_turn as clear_dead_turn
    from agentdoc.turn.status import folder_statuses as folder_statuses
    from agentdoc.turn.status import live_turn as live_turn
    from agentdoc.turn.status import make_state_dir as make_state_dir
    from agentdoc.turn.status import now_iso as now_iso
    from agentdoc.turn.status import own_base as own_base
    from agentdoc.turn.status import own_write as own_write
    from agentdoc.turn.status import read_status as read_status
    from agentdoc.turn.status import remove_state as remove_state
    from agentdoc.turn.status import request_cancel as request_cancel
    from agentdoc.turn.status import state_dir as state_dir
    from agentdoc.turn.status import state_file as state_file
    from agentdoc.turn.status import write_status as write_status
    from agentdoc.turn.undoing import undo as undo
    from agentdoc.turn.undoing import undo_wrote as undo_wrote

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "approvals": ("request_answer",),
        "archive": ("archive_document",),
        "creating": ("create_document",),
        "detect": ("submission", "wants_marker"),
        "forking": ("fork",),
        "gitsync": ("behind", "integrate", "sync_on", "toplevel"),
        "marks": ("Spent", "read_marks", "spent"),
        "presets": ("apply_preset", "list_presets", "load_preset", "presets_dir"),
        "recovery": ("marked", "open_regions", "recover"),
        "outcome": ("Progress", "TurnOutcome"),
        "runner": ("Clearer", "TurnRunner"),
        "session": ("Mode", "prepare_turn"),
        "status": (
            "Status",
            "all_statuses",
            "as_found",
            "clear_dead_turn",
            "folder_statuses",
            "live_turn",
            "make_state_dir",
            "now_iso",
            "own_base",
            "own_write",
            "read_status",
            "remove_state",
            "request_cancel",
            "state_dir",
            "state_file",
            "write_status",
        ),
        "undoing": ("undo", "undo_wrote"),
    },
)
