"""Building a `Snapshot`: the one read of a settled save, and the looks beyond the file
(git's lock and traces, agentdoc's own write records) that deciding about it needs."""

from __future__ import annotations

from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.daemon.synced.gitguard import git_busy, written_by_git
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.tree import stamp_of
from agentdoc.document import WriteLedger, digest
from agentdoc.records import own_base, own_write


def take(
    path: Path,
    settings: Settings,
    ledger: WriteLedger,
    *,
    turn_running: bool = False,
    seen: str | None = None,
) -> Snapshot:
    """Read `path` once into a snapshot; `seen` is the digest of the version last handled,
    whose deeper looks (agentdoc's own command, git's traces) are not taken again."""
    if git_busy(path):
        # git is rewriting the tree: read nothing half-done.
        return Snapshot(path, settings, git_busy=True)
    if turn_running and ledger.is_own_stamp(path, stamp_of(path)):
        # Not read and hashed again on every flush of a long reply.
        return Snapshot(path, settings, turn_stamp=True)
    return of_bytes(path, settings, ledger, read_stable(path), seen=seen)


def of_bytes(
    path: Path,
    settings: Settings,
    ledger: WriteLedger,
    data: bytes | None,
    *,
    seen: str | None = None,
    settled: bool = True,
) -> Snapshot:
    """The snapshot of bytes already read (`None`: the file is gone). With `settled` (a save
    as the watch reports it), a version agentdoc wrote itself is not looked into further."""
    if data is None:
        return Snapshot(path, settings)
    hashed = digest(data)  # once: a long document costs milliseconds per hash
    own = ledger.is_own(path, data, hashed)
    snap = Snapshot(path, settings, data, hashed, own_content=own)
    if hashed == seen or (own and settled) or not snap.maybe_session:
        return snap
    command = own_write(path, hashed)
    base = own_base(path, seen) if command is None and seen is not None else None
    snap = Snapshot(
        path, settings, data, hashed, own_content=own, own_command=command, own_base=base
    )
    # git's traces only matter for a version that would send a prompt, which takes the parse;
    # set on the value still being built, so the parse is not done twice.
    if command is None and snap.prompt is not None and written_by_git(path, data):
        object.__setattr__(snap, "git_wrote", True)
    return snap


def of_text(path: Path, settings: Settings, ledger: WriteLedger, text: str) -> Snapshot:
    """The snapshot of a version agentdoc has just written itself (a merge)."""
    return of_bytes(path, settings, ledger, text.encode("utf-8"), settled=False)
