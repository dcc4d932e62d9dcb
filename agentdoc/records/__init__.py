"""What turns leave behind, below the turn that writes it: the state files under `.agentdoc/`
(status, cancel requests, agentdoc's own versions of a document, the journal a crash is
recovered from, the marks of where each turn sits in its session, the kept answers for the next
prompt), the transcript snapshot a resumed session is told the edits against, a fork's lineage,
and the files' snapshots `undo` takes back.

Nothing here runs a turn or a command: `agentdoc.turn` writes these records as a turn goes,
`agentdoc.conversation` reads and rewrites them for `undo`, `fork` and `archive`, and the
daemon and the command line read the status. This package imports neither. Other packages
import the names in ``__all__`` from here; each loads its submodule on first use (see
:mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.records.history import Snapshot as Snapshot
    from agentdoc.records.history import archived_transcript as archived_transcript
    from agentdoc.records.history import history_edits as history_edits
    from agentdoc.records.history import joined as joined
    from agentdoc.records.history import read_snapshot as read_snapshot
    from agentdoc.records.history import record_turn as record_turn
    from agentdoc.records.history import unfinished_reply as unfinished_reply
    from agentdoc.records.history import unfinished_to_send as unfinished_to_send
    from agentdoc.records.history import write_snapshot as write_snapshot
    from agentdoc.records.journal import Journal as Journal
    from agentdoc.records.lineage import Lineage as Lineage
    from agentdoc.records.lineage import Target as Target
    from agentdoc.records.lineage import first_turn_of_fork as first_turn_of_fork
    from agentdoc.records.lineage import resume_target as resume_target
    from agentdoc.records.marks import Spent as Spent
    from agentdoc.records.marks import kept_in as kept_in
    from agentdoc.records.marks import read_marks as read_marks
    from agentdoc.records.marks import session_total as session_total
    from agentdoc.records.marks import set_mark as set_mark
    from agentdoc.records.marks import spent as spent
    from agentdoc.records.marks import undo_marks as undo_marks
    from agentdoc.records.ownwrites import note_own_write as note_own_write
    from agentdoc.records.ownwrites import own_base as own_base
    from agentdoc.records.ownwrites import own_write as own_write
    from agentdoc.records.reasons import carried as carried
    from agentdoc.records.reasons import drop as drop
    from agentdoc.records.reasons import keep as keep
    from agentdoc.records.recovery import marked as marked
    from agentdoc.records.recovery import open_regions as open_regions
    from agentdoc.records.recovery import recover as recover
    from agentdoc.records.snapshots import after_turn as after_turn
    from agentdoc.records.snapshots import before_turn as before_turn
    from agentdoc.records.snapshots import forget as forget
    from agentdoc.records.status import Status as Status
    from agentdoc.records.status import StatusReporter as StatusReporter
    from agentdoc.records.status import as_found as as_found
    from agentdoc.records.status import clear_dead_turn as clear_dead_turn
    from agentdoc.records.status import folder_statuses as folder_statuses
    from agentdoc.records.status import live_turn as live_turn
    from agentdoc.records.status import make_state_dir as make_state_dir
    from agentdoc.records.status import now_iso as now_iso
    from agentdoc.records.status import read_status as read_status
    from agentdoc.records.status import remove_state as remove_state
    from agentdoc.records.status import request_cancel as request_cancel
    from agentdoc.records.status import state_dir as state_dir
    from agentdoc.records.status import state_file as state_file
    from agentdoc.records.status import take_cancel_request as take_cancel_request
    from agentdoc.records.status import write_status as write_status
    from agentdoc.records.undofiles import files_to_restore as files_to_restore

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "history": (
            "Snapshot",
            "archived_transcript",
            "history_edits",
            "joined",
            "read_snapshot",
            "record_turn",
            "unfinished_reply",
            "unfinished_to_send",
            "write_snapshot",
        ),
        "journal": ("Journal",),
        "lineage": (
            "Lineage",
            "Target",
            "first_turn_of_fork",
            "resume_target",
        ),
        "marks": (
            "Spent",
            "kept_in",
            "read_marks",
            "session_total",
            "set_mark",
            "spent",
            "undo_marks",
        ),
        "reasons": (
            "carried",
            "drop",
            "keep",
        ),
        "recovery": (
            "marked",
            "open_regions",
            "recover",
        ),
        "snapshots": (
            "after_turn",
            "before_turn",
            "forget",
        ),
        "ownwrites": ("note_own_write", "own_base", "own_write"),
        "status": (
            "Status",
            "StatusReporter",
            "as_found",
            "clear_dead_turn",
            "folder_statuses",
            "live_turn",
            "make_state_dir",
            "now_iso",
            "read_status",
            "remove_state",
            "request_cancel",
            "state_dir",
            "state_file",
            "take_cancel_request",
            "write_status",
        ),
        "undofiles": ("files_to_restore",),
    },
)
