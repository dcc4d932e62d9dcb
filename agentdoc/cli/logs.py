"""How log lines look (escaped where a file name is not UTF-8, one line on a terminal), and
the daemon's log file in the user state folder, rotated, that `agentdoc logs` reads.

Apart from the group so that `agentdoc --help` does not import logging.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import time
from pathlib import Path
from typing import BinaryIO

from agentdoc.userstate import user_state_dir


class Escaping(logging.Formatter):
    """Log lines that any terminal or UTF-8 file can take: a file name whose bytes are not
    UTF-8 is shown with escapes (``r\\xe9sum\\xe9.md``), not refused or garbled."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if text.isascii():
            return text
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class OneLine(Escaping):
    """A log record as one line on the terminal: its traceback, if any, is for -vv and for
    `--log-file`, not for a person watching the daemon."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text
        record.exc_info, record.exc_text = None, None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text = saved


# The daemon's log file: big enough for days of turns, small enough to mail with a report.
LOG_BYTES = 2 * 1024 * 1024
LOG_BACKUPS = 3  # watch.log.1 … watch.log.3 beside it
# Several daemons (one per tree) may share the file: the pid tells their lines apart.
FILE_SHAPE = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def is_log_file(handler: logging.Handler) -> bool:
    return isinstance(handler, logging.FileHandler)


def log_path() -> Path:
    """`watch.log` in the user state folder (`$AGENTDOC_STATE_DIR`, else the XDG one)."""
    return user_state_dir() / "watch.log"


def open_log_file(path: Path, *, rotate: bool) -> logging.Handler:
    """A handler appending full records (tracebacks too) to `path`; the default log is
    rotated, a `--log-file` of the user's own is left for logrotate and the like."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler: logging.Handler
    if rotate:
        handler = logging.handlers.RotatingFileHandler(
            path,
            maxBytes=LOG_BYTES,
            backupCount=LOG_BACKUPS,
            encoding="utf-8",
            errors="backslashreplace",
        )
    else:
        handler = logging.FileHandler(path, encoding="utf-8", errors="backslashreplace")
    handler.setFormatter(Escaping(FILE_SHAPE))
    handler.setLevel(logging.INFO)
    return handler


def last_lines(path: Path, count: int) -> tuple[bytes, int]:
    """The file's last `count` lines (0: all of it), and where they end, for `follow` to go on
    from; nothing when there is no file yet."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return b"", 0
    shown = data if count == 0 else b"".join(data.splitlines(keepends=True)[-count:])
    return shown, len(data)


def follow(path: Path, out: BinaryIO, start: int, pace: float = 0.2) -> None:
    """Write what is appended to `path` after byte `start`, until interrupted (Ctrl-C), as
    `tail -F` does: a rotated or truncated file is read again from its start."""
    stream: BinaryIO | None = None
    inode = None
    while True:
        if stream is None:
            stream, inode = _open_at(path, start)
        elif _replaced(path, inode, stream.tell()):
            out.write(stream.read())  # the old file's last lines, then the new one's
            stream.close()
            stream, inode, start = None, None, 0
            continue
        chunk = stream.read() if stream is not None else b""
        if chunk:
            out.write(chunk)
            out.flush()
        else:
            time.sleep(pace)  # a file has nothing to wait on portably; a fifth of a second


def _open_at(path: Path, start: int) -> tuple[BinaryIO | None, int | None]:
    try:
        stream = path.open("rb")
    except FileNotFoundError:
        return None, None
    stream.seek(start)
    return stream, os.fstat(stream.fileno()).st_ino


def _replaced(path: Path, inode: int | None, position: int) -> bool:
    try:
        st = path.stat()
    except FileNotFoundError:
        return False  # rotated, the new file not made yet: finish the old one meanwhile
    return st.st_ino != inode or st.st_size < position
