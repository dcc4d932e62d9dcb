"""What to do with one version of a document: a pure decision from what the daemon knows of
the document and the snapshot of the version (no I/O, no threads, no clock).

The daemon's loop takes a snapshot, asks `classify`, and acts on the answer with `match`. A new
reason to hold a prompt back is a `Reason` subclass and one case here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentdoc.daemon.bulk import awaits_prompt, bulk_reason
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.document import shown_name

# How the version came: a settled save; the look after a turn's end ("recheck"); the same
# save once a reply left open was closed ("mended"); a save agentdoc merged with its own writes
# or a sync tool's conflict copy ("merged"); a document found at start-up; the remote's commits
# git sync brought in ("pulled"); a prompt the gate let go ("released"). The last three are no
# save of the file, so git's traces and a notice in the document are not looked for.
Stage = Literal["save", "recheck", "mended", "merged", "found", "pulled", "released"]
NOT_SAVED = ("found", "pulled", "released")


@dataclass(frozen=True)
class Known:
    """What the daemon knows of the document apart from this version."""

    stage: Stage = "save"
    seen: str | None = None  # digest of the version last handled
    previous: str | None = None  # the conversation as last seen, to tell typing from bulk
    turn_running: bool = False
    owes: bool = False  # a reply a failed turn left open is owed a close


# -- reasons to hold a pending prompt back ---------------------------------------------------


@dataclass(frozen=True)
class Reason:
    why: str


@dataclass(frozen=True)
class BulkChange(Reason):
    """The conversation was replaced, not added to (turns gone, a new session id, ...)."""


@dataclass(frozen=True)
class GitWrote(Reason):
    why: str = "git wrote it: a checkout, stash, reset, pull or merge"


@dataclass(frozen=True)
class Held(Reason):
    """The gate keeps a due prompt back: an untrusted synced folder, the turn budget, or
    another machine's claim. Told once per `kind`, sent when the gate allows."""

    kind: str  # "trust", "budget", "claiming", "owner"
    quiet: bool = False  # a wait of seconds that needs nobody: not worth a notification
    git_root: Path | None = None  # asked again with the same repository


# -- decisions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Later:
    """git is rewriting the tree: look again when it is done."""


@dataclass(frozen=True)
class Ignore:
    why: str


@dataclass(frozen=True)
class Forget:
    """The file is gone."""


@dataclass(frozen=True)
class Remember:
    """A version already handled, or agentdoc's own: remembered, nothing more."""


@dataclass(frozen=True)
class TakeOwn:
    """A version another agentdoc command wrote (`undo`, `archive`)."""

    command: str


@dataclass(frozen=True)
class Refuse:
    """The file cannot be used as it is; `message` says why (None: nothing to tell)."""

    message: str | None
    refused: bool = False  # it means to be a session document but is none: remembered
    notice: str | None = None  # told in the document too, where the prompt waits


@dataclass(frozen=True)
class Queue:
    """Saved while its turn runs: looked at again when the turn ends."""

    prompt: bool  # the save holds a prompt (the live line says one waits)


@dataclass(frozen=True)
class Mend:
    """A reply no turn owns is open, or owed a close: close it first, then decide again."""


@dataclass(frozen=True)
class NoPrompt:
    """A session document with no prompt submitted: nothing to send."""


@dataclass(frozen=True)
class Hint:
    """A `## User` heading waits for its prompt: the agent may be started ahead."""


@dataclass(frozen=True)
class Hold:
    reason: Reason


@dataclass(frozen=True)
class Submit:
    marker: bool
    prompt: str


Decision = (
    Later
    | Ignore
    | Forget
    | Remember
    | TakeOwn
    | Refuse
    | Queue
    | Mend
    | NoPrompt
    | Hint
    | Hold
    | Submit
)


def classify(known: Known, snap: Snapshot) -> Decision:
    """What to do with `snap`, the version of a document the daemon `known`s this much of."""
    if known.stage == "save":
        return _save(known, snap)
    if known.stage == "recheck" and snap.own_command is not None:
        return TakeOwn(snap.own_command)
    if known.stage == "mended" and known.owes:
        return Ignore("the open reply cannot be closed yet; nothing is sent below it")
    if known.stage == "merged" and (snap.open_reply or known.owes):
        return Mend()
    return _ask(known, snap)


def gated(decision: Decision, held: Held | None) -> Decision:
    """`decision`, unless it sends a prompt the gate holds back (`held`: the gate's verdict,
    asked only for a prompt about to be sent, as asking may claim the document)."""
    if isinstance(decision, Submit) and held is not None:
        return Hold(held)
    return decision


def _save(known: Known, snap: Snapshot) -> Decision:
    if snap.git_busy:
        return Later()
    if snap.turn_stamp:
        return Remember()  # the turn's own streamed write (its end reads the file anyway)
    if snap.gone:
        return Forget()
    if snap.own_content or snap.digest == known.seen:
        return Remember()
    if not snap.maybe_session:
        return Ignore("not a session document")
    if snap.own_command is not None and snap.text is not None:
        return TakeOwn(snap.own_command)
    if snap.text is None:
        return Refuse(snap.decode_problem)
    if not snap.session:
        return _not_session(snap)
    if known.turn_running:
        # The running turn itself notices a deleted (or stale-saved) reply block.
        return Queue(prompt=snap.prompt is not None)
    if snap.open_reply or known.owes:
        return Mend()
    return _ask(known, snap)


def _not_session(snap: Snapshot) -> Refuse:
    problem = snap.session_problem
    if problem is None:
        return Refuse(None)
    name = snap.path.name
    return Refuse(f"{name}: {problem}. Fix it and save; until then it is left alone", True)


def _ask(known: Known, snap: Snapshot) -> Decision:
    """Submit the pending prompt; for a save, only if the save asked for it."""
    saved = known.stage not in NOT_SAVED
    if snap.text is None:
        return Refuse(snap.decode_problem)
    if snap.document is None:
        problem = snap.settings_problem
        message = f"{shown_name(snap.path.name)}: {problem}"
        return Refuse(message, notice=problem if saved else None)
    if snap.prompt is None:
        return Hint() if awaits_prompt(snap.document) else NoPrompt()
    previous = None if known.previous is None else bulk_reason(known.previous, snap.document)
    if previous is not None:
        return Hold(BulkChange(previous))
    # In sync mode git bringing the remote's commits in is how a prompt arrives.
    if saved and snap.git_wrote and not snap.git_sync:
        return Hold(GitWrote())
    return Submit(snap.marker, snap.prompt)
