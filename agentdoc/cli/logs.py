"""How log lines look: escaped where a file name is not UTF-8, one line on a terminal.

Apart from the group so that `agentdoc --help` does not import logging.
"""

from __future__ import annotations

import logging


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
