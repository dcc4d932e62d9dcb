"""Where the CLI's stdout and stderr go: memory-backed files we read by offset, not pipes.

The CLI writes its last lines (a multi-megabyte ``assistant`` line, then a ``result`` line that
repeats it) and exits at once; whatever a full pipe had not taken by then is lost, and the turn
then looks interrupted although the reply was complete. A reader thread cannot always keep a
pipe empty: it needs the interpreter lock to return from each read, and the thread that parses
and writes the document can hold it for a long stretch on a long reply. A regular file never
pushes back, so on Linux the child writes into an anonymous in-memory file (``memfd``) and we
read what it has written so far, on the turn's own thread each time it waits for a line
(:class:`PolledLines`). The end of output is the CLI's own exit, not the closing of a pipe, so a
background child that inherited stdout (a wrapper script's ``( sleep 45 ) &``) can no longer hold
the turn open. Elsewhere, a pipe read in big chunks on its own thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from agentdoc.agents.claude.framing import LineFramer

log = logging.getLogger(__name__)

READ_SIZE = 1 << 20
# A pipe holds 64 KiB unless its size was raised, so a read asks for no more: a bigger buffer is
# mapped and unmapped by the allocator on every read (three system calls more, each time).
PIPE_READ_SIZE = 1 << 16
POLL = 0.02  # seconds between looks at a memory file that has nothing new yet
# While every look finds more (a reply streaming), the looks space out up to this: each one
# costs a thread's wake-up, and streamed text is written at the flush interval anyway. A look
# that finds nothing brings the interval back to POLL, so the first word after a pause is read
# as soon as before.
STEADY_POLL = 0.08
# Likewise a pipe's reads (`paced`) once a reply is well under way: this many paces apart (the
# turn takes the lines at its flushes, a quarter of a second apart).
STEADY_PACES = 5
# A read this full means the agent writes faster than the pace lets through (a big tool output,
# a multi-megabyte reply): the next read comes at once, so the pipe never holds the agent up.
BACKLOG = PIPE_READ_SIZE // 2


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

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class PolledLines:
    """The lines of a memory file, read on the thread that asks for them.

    A reader thread would wake at every poll only to hand lines to the turn's thread, which
    wakes for them anyway; reading here saves the second wake-up and the hand-over.
    """

    def __init__(self, memory: MemoryOutput, exited: Callable[[], bool]) -> None:
        self._memory = memory
        self._exited = exited
        self._framer = LineFramer()
        self._ended = threading.Event()  # set: all was read after the exit, or closed
        self._interval = POLL

    def next_batch(self, timeout: float) -> list[bytes] | None:
        """The non-blank lines written since the last call (waiting up to `timeout` for one);
        ending with b"" once the child exited and all it wrote was read; None if none came."""
        deadline = time.monotonic() + timeout
        waited = False
        while not self._ended.is_set():
            done = self._exited()  # before the read: a write made before the exit is read below
            lines = [line for line in self._framer.feed(self._memory.read_new()) if line]
            if waited:
                self._interval = min(self._interval * 2, STEADY_POLL) if lines else POLL
            if done:
                self._ended.set()
                return [*lines, *(line for line in self._framer.end() if line), b""]
            if lines:
                return lines
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self._ended.wait(min(self._interval, remaining))
            waited = True
        return [b""]

    def close(self) -> None:
        """Read no more (the file is about to be closed); wakes a caller waiting for lines."""
        self._ended.set()


def pipe_chunks(fd: int) -> Iterator[bytes]:
    """What a pipe delivers, in big reads, until it is closed."""
    while True:
        try:
            chunk = os.read(fd, PIPE_READ_SIZE)
        except OSError as exc:  # EBADF/EIO: the pipe is gone; treat as the end of output
            log.debug("claude stdout read failed: %s", exc)
            return
        if not chunk:
            return
        yield chunk


def paced(
    chunks: Iterable[bytes], pace: float, burst: int = 4, steady: int = 16
) -> Iterator[bytes]:
    """The chunks, but once `burst` of them in a row came less than `pace` apart (a reply
    streaming), the next read waits until `pace` has passed: the lines meanwhile pile up in the
    pipe and come in one read, one wake-up of the reading thread per batch rather than per line
    (the wake-up costs more CPU than the line). The first lines after a quiet spell, the start
    of a reply's text among them, are read at once; once `steady` reads in a row found lines
    waiting (a reply well under way, written a quarter of a second at a time) each waits
    `STEADY_PACES` paces."""
    last = float("-inf")
    quick = 0
    for chunk in chunks:
        yield chunk
        now = time.monotonic()
        quick = quick + 1 if now - last < pace else 0
        last = now
        if quick >= burst and len(chunk) < BACKLOG:
            time.sleep(pace * STEADY_PACES if quick >= steady else pace)
            last = time.monotonic()  # what piled up meanwhile is read at once: still streaming
