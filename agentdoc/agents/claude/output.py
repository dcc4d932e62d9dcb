"""Where the CLI's stdout and stderr go: memory-backed files we read by offset, not pipes.

The CLI writes its last lines (a multi-megabyte ``assistant`` line, then a ``result`` line that
repeats it) and exits at once; whatever a full pipe had not taken by then is lost, and the turn
then looks interrupted although the reply was complete. A reader thread cannot always keep a
pipe empty: it needs the interpreter lock to return from each read, and the thread that parses
and writes the document can hold it for a long stretch on a long reply. A regular file never
pushes back, so on Linux the child writes into an anonymous in-memory file (``memfd``) and we
read what it has written so far. The end of output is the CLI's own exit, not the closing of a
pipe, so a background child that inherited stdout (a wrapper script's ``( sleep 45 ) &``) can no
longer hold the turn open. Elsewhere, a pipe read in big chunks on its own thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator

log = logging.getLogger(__name__)

READ_SIZE = 1 << 20
POLL = 0.02  # seconds between looks at a memory file that has nothing new yet


def memory_files_supported() -> bool:
    return hasattr(os, "memfd_create")


class MemoryOutput:
    """An anonymous file the child writes into (its fd goes to Popen as stdout or stderr)."""

    def __init__(self, name: str) -> None:
        self.fd = os.memfd_create(name, os.MFD_CLOEXEC)  # type: ignore[attr-defined,unused-ignore]
        self._offset = 0

    def read_new(self) -> bytes:
        """Everything written since the last call (pread: the child's file offset is shared)."""
        pieces: list[bytes] = []
        while chunk := os.pread(self.fd, READ_SIZE, self._offset):
            pieces.append(chunk)
            self._offset += len(chunk)
        return b"".join(pieces)

    def chunks(self, exited: Callable[[], bool], stop: threading.Event) -> Iterator[bytes]:
        """What the child writes, as it comes, until it has exited and all of it was read."""
        while True:
            # Look at the exit first: a write made before the exit is then read below.
            done = exited() or stop.is_set()
            if data := self.read_new():
                yield data
            elif done:
                return
            else:
                stop.wait(POLL)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def pipe_chunks(fd: int) -> Iterator[bytes]:
    """What a pipe delivers, in big reads, until it is closed."""
    while True:
        try:
            chunk = os.read(fd, READ_SIZE)
        except OSError as exc:  # EBADF/EIO: the pipe is gone; treat as the end of output
            log.debug("claude stdout read failed: %s", exc)
            return
        if not chunk:
            return
        yield chunk
