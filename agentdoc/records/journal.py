"""The turn journal: what was sent, and the reply text as it arrived, for crash recovery.

Before a turn's first write to the document, ``.agentdoc/<name>.journal.jsonl`` records the
turn (nonce, prompt, session, the document's hash); the reply text is appended (only what is new)
and synced just before each streamed write to the document, and the file is removed when the
turn ends. A journal still there at start-up belongs to a turn that was killed: `recovery`
closes that turn's region with the journal's text (at least as far as the last write to the
document) and marks it interrupted. Because the region is
written before the CLI starts, a prompt that was sent always has a region (or the user deleted
it), so recovery never needs to send anything again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agentdoc.records.status import make_state_dir, state_file

log = logging.getLogger(__name__)


def journal_path(document: Path) -> Path:
    return state_file(document, ".journal.jsonl")


@dataclass(frozen=True)
class Entry:
    nonce: str
    prompt: str
    session: str | None
    text: str  # the reply text received before the crash
    pid: int | None = None  # the CLI process the turn ran, which may have outlived us


class Journal:
    def __init__(self, document: Path, nonce: str, prompt: str, session: str | None) -> None:
        self.path = journal_path(document)
        self._text = ""
        self._file: IO[str] | None = None
        self.keep = False  # set when the turn ended with its region still open in the document
        self.pid: int | None = None  # the agent's process, as last noted
        try:
            make_state_dir(self.path.parent)
            self._file = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            # A folder we cannot write to loses crash recovery detail, not the turn.
            log.warning("cannot write the turn journal %s: %s", self.path, exc)
            return
        self._write({"nonce": nonce, "prompt": prompt, "session": session})
        # Handed to the OS now (a killed daemon leaves it), synced with the agent's pid right
        # after the agent is asked (`note_process`): an fsync here would delay every prompt,
        # and only a machine that stops in that moment would miss it, the agent with it.
        self._file.flush()

    def _write(self, record: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def record(self, text: str) -> None:
        """Note the reply text so far (appending only what is new)."""
        if text == self._text:
            return
        if text.startswith(self._text):
            self._write({"add": text[len(self._text) :]})
        else:  # a failed attempt was rolled back
            self._write({"reset": text})
        self._text = text

    def note_process(self, pid: int | None) -> None:
        self.pid = pid
        self._write({"pid": pid})
        self.sync()

    def sync(self) -> None:
        if self._file is not None:
            self._file.flush()
            with contextlib.suppress(OSError):
                os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if self.keep:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()


def read_journal(document: Path) -> Entry | None:
    """The unfinished turn recorded for this document, if any."""
    try:
        lines = journal_path(document).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if not lines:
        return None
    try:
        head = json.loads(lines[0])
        entry = Entry(str(head["nonce"]), str(head["prompt"]), head.get("session"), "")
    except (ValueError, KeyError, TypeError):
        return None
    text, pid = "", None
    for line in lines[1:]:
        try:
            record = json.loads(line)
        except ValueError:
            break  # a line torn by the crash: keep what came before it
        pid = record.get("pid", pid)
        text = record["reset"] if "reset" in record else text + record.get("add", "")
    return Entry(entry.nonce, entry.prompt, entry.session, text, pid)


def discard(document: Path) -> None:
    with contextlib.suppress(OSError):
        journal_path(document).unlink()
