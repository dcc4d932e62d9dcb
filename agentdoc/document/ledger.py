"""What agentdoc wrote, by content hash: how the watcher tells its own writes from a person's
without timing windows."""

from __future__ import annotations

import hashlib
import threading
from collections import deque
from collections.abc import Sequence
from pathlib import Path


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class PrefixDigest:
    """`digest` of successive versions of a document that share a long unchanged start (the
    conversation above a streaming reply): the start is hashed once, and each version costs
    only what follows it."""

    def __init__(self) -> None:
        self._prefix = b""
        self._state = hashlib.sha256()

    def digest(self, source: bytes, unchanged: int, rest: Sequence[bytes | memoryview]) -> str:
        """The digest of `source`'s first `unchanged` bytes (likely the last call's) followed
        by the pieces of `rest`."""
        if len(self._prefix) != unchanged or not source.startswith(self._prefix):
            self._prefix = source[:unchanged]
            self._state = hashlib.sha256(self._prefix)
        state = self._state.copy()
        for piece in rest:
            state.update(piece)
        return state.hexdigest()


class WriteLedger:
    """Remembers the hashes of recent content we wrote, per file, across threads."""

    def __init__(self, keep: int = 64) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._hashes: dict[Path, deque[str]] = {}
        self._stamps: dict[Path, tuple[int, int, int]] = {}
        # The last whole content written: what a save made from an older copy is merged with.
        self._last: dict[Path, bytes] = {}

    def record(self, path: Path, data: bytes, hashed: str | None = None) -> None:
        """Remember `data` as written by us; `hashed` is its `digest`, if already known."""
        key = path.absolute()
        found = digest(data) if hashed is None else hashed
        with self._lock:
            self._hashes.setdefault(key, deque(maxlen=self._keep)).append(found)
            if data:
                self._last[key] = data
            else:  # written in pieces: the whole is not known here
                self._last.pop(key, None)

    def last(self, path: Path) -> bytes | None:
        """The whole content we last wrote to `path`, when it was written whole."""
        with self._lock:
            return self._last.get(path.absolute())

    def is_own(self, path: Path, data: bytes, hashed: str | None = None) -> bool:
        found = digest(data) if hashed is None else hashed
        with self._lock:
            return found in self._hashes.get(path.absolute(), ())

    def record_stamp(self, path: Path, stamp: tuple[int, int, int]) -> None:
        """The (mtime_ns, size, inode) our last write of `path` left, taken from the written
        file itself before it was renamed into place (a save landing after it differs)."""
        with self._lock:
            self._stamps[path.absolute()] = stamp

    def is_own_stamp(self, path: Path, stamp: tuple[int, int, int] | None) -> bool:
        """Whether `path` still is our last write of it: no read, no hash of a long file."""
        with self._lock:
            return stamp is not None and self._stamps.get(path.absolute()) == stamp
