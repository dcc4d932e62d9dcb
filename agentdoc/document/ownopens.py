"""agentdoc's own opens of files, so the watcher can tell them from an editor's."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from pathlib import Path

# Opens of a document by agentdoc itself, so the watcher can tell them from an editor's: the
# kernel reports every open, not who made it. Each open leaves a token the watcher takes back
# when its event arrives; a token whose event never comes (polling, a failed open) expires.
OWN_OPEN_TTL = 2.0
_own_opens: dict[str, deque[float]] = {}
_own_lock = threading.Lock()
OWN_SWEEP_AT = 1024  # files noted before the expired ones are swept out
_own_sweep_at = OWN_SWEEP_AT


def _own_key(path: Path) -> str:
    return os.path.abspath(path)


def note_own_open(path: Path) -> None:
    """Call just before agentdoc itself opens `path` for reading."""
    global _own_sweep_at
    now = time.monotonic()
    with _own_lock:
        _own_opens.setdefault(_own_key(path), deque(maxlen=64)).append(now)
        if len(_own_opens) > _own_sweep_at:  # files whose opens nobody watches (other trees)
            for key in [k for k, t in _own_opens.items() if not t or now - t[-1] > OWN_OPEN_TTL]:
                del _own_opens[key]
            # Not again before the table doubles: a start-up reading a vault's 10,000 notes
            # within the time to live would otherwise sweep the whole table at every read.
            _own_sweep_at = max(OWN_SWEEP_AT, 2 * len(_own_opens))


def take_own_open(path: Path) -> bool:
    """Whether an open reported for `path` now was one of agentdoc's own (takes its token)."""
    now = time.monotonic()
    key = _own_key(path)
    with _own_lock:
        tokens = _own_opens.get(key)
        while tokens and now - tokens[0] > OWN_OPEN_TTL:
            tokens.popleft()
        taken = bool(tokens)
        if tokens:
            tokens.popleft()
        if not tokens:
            # No key is ever left with an empty deque: the clean-up above reads each last token.
            _own_opens.pop(key, None)
        return taken
