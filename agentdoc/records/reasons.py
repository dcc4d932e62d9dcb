"""What the person said answering a turn's tool requests, kept for the next prompt.

An agent whose answer to a permission request has no field for the person's words (an agent whose
protocol offers none) hears them as the first words of the next prompt in that session. They are
kept with the document's state, beside its other turn files, until a turn has carried them:
a one-shot `agentdoc run` starts a new agent process per turn, and the daemon may be restarted
between two turns.
"""

from __future__ import annotations

import contextlib
import json
import logging
from pathlib import Path

from agentdoc.document import atomic_write
from agentdoc.records.status import make_state_dir, state_file

log = logging.getLogger(__name__)


def reasons_path(document: Path) -> Path:
    return state_file(document, ".reasons.json")


def carried(document: Path) -> tuple[str, ...]:
    """The words still to be sent, oldest first."""
    try:
        found = json.loads(reasons_path(document).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()
    except (OSError, ValueError) as exc:
        log.warning("%s: ignoring unreadable answers kept for the next prompt: %s", document, exc)
        return ()
    if not isinstance(found, list):
        return ()
    return tuple(item for item in found if isinstance(item, str) and item.strip())


def keep(document: Path, reason: str) -> None:
    """Add what the person said to what the next prompt sends."""
    try:
        _write(document, [*carried(document), reason.strip()])
    except OSError as exc:  # the turn goes on; the words stay in the document's reply
        log.warning("%s: cannot keep your answer for the next prompt: %s", document, exc)


def drop(document: Path, count: int) -> None:
    """The first `count` were sent (a turn opened its session with them)."""
    try:
        _write(document, list(carried(document)[count:]))
    except OSError as exc:
        log.warning("%s: cannot mark answers as sent: %s", document, exc)
        with contextlib.suppress(OSError):  # sent twice is worse than a later one lost
            reasons_path(document).unlink(missing_ok=True)


def _write(document: Path, reasons: list[str]) -> None:
    path = reasons_path(document)
    if not reasons:
        path.unlink(missing_ok=True)
        return
    make_state_dir(path.parent)
    atomic_write(path, json.dumps(reasons, ensure_ascii=False).encode("utf-8"))
