"""agentdoc's own versions of a document, written by a command (`undo`, `archive`), kept
beside it: another process, such as the daemon, then tells such a version from someone's save."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from agentdoc.document import atomic_write, digest
from agentdoc.records.status import make_state_dir, state_file


def note_own_write(document: Path, data: bytes, why: str, replaced: bytes | None = None) -> None:
    """Record, before writing it, that `data` is agentdoc's own version of `document`, made by
    the command `why` (`undo`, `archive`) over the version `replaced`: another process, such as
    the daemon, then knows that version for what it is and not as someone's save (turns that
    disappear in it were taken back on purpose). The version itself is kept too: a save landing
    before the daemon saw it is judged against it (`own_base`), not against `replaced`."""
    record = {"digest": digest(data), "by": why, "pid": os.getpid()}
    if replaced is not None:
        record |= {"from": digest(replaced), "text": data.decode("utf-8", "replace")}
    path = state_file(document, ".written.json")
    with contextlib.suppress(OSError):  # at worst, the daemon asks before sending
        make_state_dir(path.parent)
        atomic_write(path, json.dumps(record).encode())


def _own_record(document: Path) -> dict[str, object]:
    try:
        record = json.loads(state_file(document, ".written.json").read_bytes())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def own_write(document: Path, hashed: str) -> str | None:
    """The command that wrote this version (by its `digest`) of `document`, if agentdoc did."""
    record = _own_record(document)
    found = record.get("by")
    return str(found) if found and record.get("digest") == hashed else None


def own_base(document: Path, known: str) -> str | None:
    """The text an agentdoc command wrote over the version (by its digest) `known`, if one
    did: what a save made since was made from, whether or not its write was seen."""
    record = _own_record(document)
    text = record.get("text")
    return text if isinstance(text, str) and record.get("from") == known else None
