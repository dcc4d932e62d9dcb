"""What the daemon finds at start-up: the documents a walk of the tree turns up, read once.

A document is remembered as it stands, without sending its prompt (unless asked to): a prompt
already waiting when the daemon started is told in its status, to be sent by the next save.
Replies a killed process left open are closed first, so the state remembered is a clean one.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentdoc.daemon.notices import as_argument, hold
from agentdoc.daemon.settle import read_stable
from agentdoc.daemon.tree import changed_ns, maybe_session, mtime_ns, starts_as_session
from agentdoc.document import (
    WriteLedger,
    decode,
    is_session_document,
    read_bytes,
    shown_name,
)
from agentdoc.turn import clear_dead_turn, live_turn, recover

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    data: bytes
    text: str
    mtime: int  # read before the content, so a save made meanwhile counts as one
    session: bool  # False: it means to be a session document but is not a valid one
    # When it last changed here, also read first: the later of mtime and ctime, so a file a
    # sync tool delivered with the sender's older mtime counts as arriving when it did.
    arrived: int = 0


def read_found(
    path: Path, ledger: WriteLedger, elsewhere: Callable[[Path], bool] = lambda _p: False
) -> Found | None:
    """The document at `path` as start-up finds it, or None when it is no session document;
    `elsewhere`: another machine answers it, so a reply open in it is that machine's."""
    mtime, arrived = mtime_ns(path), changed_ns(path)
    if not starts_as_session(path):
        return None
    data = read_stable(path)
    if data is None or not maybe_session(data):
        return None
    text = decode(path, data)
    if not is_session_document(text):
        return Found(data, text, mtime, session=False, arrived=arrived)
    if live_turn(path) is None and not elsewhere(path):
        # Replies left open by a killed process; one a live `agentdoc run` is still streaming
        # is left alone.
        if recover(path, ledger):
            data = read_bytes(path)
            text = decode(path, data)
        clear_dead_turn(path)
    return Found(data, text, mtime, session=True, arrived=arrived)


def tell_unsent(path: Path) -> None:
    """Say so when a prompt already waiting at start-up is left unsent (not a surprise send,
    not a silent skip)."""
    log.warning(
        "%s has an unsent prompt; save it again or run `agentdoc run %s`",
        shown_name(path.name),
        shown_name(str(path)),
    )
    hold(
        path,
        "the prompt was already there when agentdoc watch started; save the document "
        f"again or run `agentdoc run {as_argument(path.name)}` to send it",
    )


def take(found: queue.SimpleQueue[Path], most: int) -> list[Path]:
    """Up to `most` paths the walk has found, without waiting for more."""
    paths: list[Path] = []
    while len(paths) < most:
        try:
            paths.append(found.get_nowait())
        except queue.Empty:
            break
    return paths
