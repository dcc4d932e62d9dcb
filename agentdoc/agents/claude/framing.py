"""The CLI's stdout as lines: byte chunks, as the pipe gives them, re-framed at each newline."""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def iter_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Re-frame arbitrary byte chunks into lines, without the ``\\n`` (or ``\\r\\n``).

    Splitting only on ``b"\\n"`` never cuts a multi-byte UTF-8 sequence, and pieces of a long
    line are joined once, so a multi-megabyte line costs linear time. A final unterminated line
    is yielded at EOF.
    """
    for batch in iter_line_batches(chunks):
        yield from batch


def iter_line_batches(chunks: Iterable[bytes]) -> Iterator[list[bytes]]:
    """:func:`iter_lines` a chunk at a time: the lines each chunk completes, in one list, so a
    reader hands them over once per read rather than once per line."""
    framer = LineFramer()
    for chunk in chunks:
        if lines := framer.feed(chunk):
            yield lines
    if lines := framer.end():
        yield lines


class LineFramer:
    """The framing of :func:`iter_lines`, fed one chunk at a time by whoever reads them."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines this chunk completes (with what came before it)."""
        pieces = chunk.split(b"\n")
        tail = pieces.pop()
        if pieces:
            self._pending.append(pieces[0])
            pieces[0] = b"".join(self._pending)
            self._pending.clear()
        if tail:
            self._pending.append(tail)
        return [_strip_cr(piece) for piece in pieces]

    def end(self) -> list[bytes]:
        """The unterminated last line, if any."""
        if not self._pending:
            return []
        line = _strip_cr(b"".join(self._pending))
        self._pending.clear()
        return [line]


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line
