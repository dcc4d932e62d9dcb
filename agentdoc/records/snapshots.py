"""What each turn did to the files the agent could touch, for `undo` to take back.

Before a turn is sent and after its reply is written, the working folder and the allowed
folders (``add_dirs``) are recorded in the document's shadow repository (`shadow`), kept under
agentdoc's state folder (``$AGENTDOC_STATE_DIR``, else ``$XDG_STATE_HOME/agentdoc``, else
``~/.local/state/agentdoc``), keyed by the document's path: never in the user's tree or git. A
turn's changes are the difference between its two trees, whatever wrote them (an edit tool, a
shell command, any agent). ``turns.json`` there says which trees belong to which turn; turns
the document no longer has (undone, archived) are forgotten with their trees.

A snapshot that fails is logged and leaves that turn without a record: the turn runs anyway,
and `undo` then says it has nothing to restore from.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, ParamSpec

from agentdoc.document import archive_path, atomic_write, sidecar_path
from agentdoc.records.shadow import Shadow, ShadowError
from agentdoc.records.status import state_dir
from agentdoc.userstate import user_state_dir

log = logging.getLogger(__name__)

RECORD = "turns.json"
P = ParamSpec("P")


@dataclass(frozen=True)
class FolderRecord:
    folder: str
    before: str | None = None  # tree ids
    after: str | None = None
    skipped_before: Mapping[str, str] = field(default_factory=dict)
    skipped_after: Mapping[str, str] = field(default_factory=dict)
    problem: str | None = None  # why a snapshot is missing


def shadow_for(document: Path, environ: Mapping[str, str] | None = None) -> Shadow:
    where = os.fsencode(document.resolve())
    key = hashlib.sha256(where).hexdigest()[:20]
    return Shadow(user_state_dir(environ) / "snapshots" / key, environ)


def folders(cwd: Path, add_dirs: Iterable[str]) -> list[Path]:
    """The folders an agent may write in, outermost only (a folder inside another is in it)."""
    found = [cwd.resolve(), *((cwd / Path(d).expanduser()).resolve() for d in add_dirs)]
    found = [f for f in dict.fromkeys(found) if f.is_dir()]
    return [f for f in found if not any(o != f and f.is_relative_to(o) for o in found)]


def excluded(document: Path, folder: Path, environ: Mapping[str, str] | None) -> list[str]:
    """What is agentdoc's own in ``folder`` (the document, its state, the snapshots): never a
    turn's change."""
    doc = document.resolve()
    own = [
        doc,
        archive_path(doc),
        sidecar_path(doc),
        state_dir(doc),
        user_state_dir(environ).resolve(),
    ]
    return [str(p.relative_to(folder)) for p in own if p.is_relative_to(folder) and p != folder]


# -- the record ---------------------------------------------------------------------------------


def read_record(shadow: Shadow) -> dict[int, list[FolderRecord]]:
    try:
        raw = json.loads((shadow.git_dir / RECORD).read_text(encoding="utf-8"))
        return {int(k): [FolderRecord(**f) for f in v] for k, v in raw.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _write_record(shadow: Shadow, record: Mapping[int, list[FolderRecord]]) -> None:
    raw: dict[str, Any] = {str(k): [asdict(f) for f in v] for k, v in sorted(record.items())}
    atomic_write(shadow.git_dir / RECORD, (json.dumps(raw, indent=1) + "\n").encode("utf-8"))


def _snap(
    shadow: Shadow, document: Path, folder: Path, environ: Mapping[str, str] | None, ref: str
) -> tuple[str, dict[str, str]]:
    snap = shadow.snapshot(folder, excluded(document, folder, environ), ref)
    return snap.tree, dict(snap.skipped)


def _never_fails(record: Callable[P, None]) -> Callable[P, None]:
    """A snapshot that cannot be taken costs only the undo of that turn, never the turn: even
    an unforeseen error is logged, not raised into the turn (or the daemon) running it."""

    @functools.wraps(record)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            record(*args, **kwargs)
        except Exception:
            log.exception("the file snapshot (%s) failed", record.__name__)

    return guarded


@_never_fails
def before_turn(
    document: Path,
    turn: int,
    cwd: Path,
    add_dirs: Iterable[str],
    environ: Mapping[str, str] | None = None,
) -> None:
    """Record the folders as they are before turn ``turn`` is sent; later turns are forgotten."""
    shadow = shadow_for(document, environ)
    record = read_record(shadow)
    # A retried turn, or turns taken out by hand: their records go (their objects at the
    # next undo or archive, which prune; pruning here would slow every turn's start).
    _drop(shadow, record, [t for t in record if t >= turn], prune=False)
    entries: list[FolderRecord] = []
    for folder in folders(cwd, add_dirs):
        try:
            ref = f"turns/{turn}/{len(entries)}/before"
            tree, skipped = _snap(shadow, document, folder, environ, ref)
            entries.append(FolderRecord(str(folder), tree, skipped_before=skipped))
        except (ShadowError, OSError) as exc:
            log.warning("%s: no snapshot of %s before turn %d: %s", document, folder, turn, exc)
            entries.append(FolderRecord(str(folder), problem=str(exc)))
    record[turn] = entries
    _save(shadow, record, document)


@_never_fails
def after_turn(document: Path, turn: int, environ: Mapping[str, str] | None = None) -> None:
    """Record the same folders once turn ``turn``'s reply is written."""
    shadow = shadow_for(document, environ)
    record = read_record(shadow)
    entries: list[FolderRecord] = []
    for i, entry in enumerate(record.get(turn, [])):
        if entry.before is None:
            entries.append(entry)
            continue
        try:
            ref = f"turns/{turn}/{i}/after"
            tree, skipped = _snap(shadow, document, Path(entry.folder), environ, ref)
            entries.append(replace(entry, after=tree, skipped_after=skipped))
        except (ShadowError, OSError) as exc:
            log.warning("%s: no snapshot after turn %d: %s", document, turn, exc)
            entries.append(replace(entry, problem=str(exc)))
    if entries:
        record[turn] = entries
        _save(shadow, record, document)


def forget(document: Path, turns: Iterable[int], environ: Mapping[str, str] | None = None) -> None:
    """Drop the records (and trees) of ``turns``: undone or archived, they cannot be undone."""
    shadow = shadow_for(document, environ)
    record = read_record(shadow)
    gone = [t for t in turns if t in record]
    if gone:
        _drop(shadow, record, gone)
        _save(shadow, record, document)


def _drop(
    shadow: Shadow, record: dict[int, list[FolderRecord]], turns: list[int], *, prune: bool = True
) -> None:
    refs = []
    for turn in turns:
        for i, _entry in enumerate(record.pop(turn, [])):
            refs += [f"turns/{turn}/{i}/before", f"turns/{turn}/{i}/after"]
    try:
        shadow.drop(refs, prune=prune)
    except ShadowError as exc:
        log.warning("cannot prune the snapshots in %s: %s", shadow.git_dir, exc)


def _save(shadow: Shadow, record: Mapping[int, list[FolderRecord]], document: Path) -> None:
    try:
        _write_record(shadow, record)
    except OSError as exc:
        log.warning("%s: cannot write the snapshot record in %s: %s", document, shadow.git_dir, exc)
