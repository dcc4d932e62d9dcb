"""Write one streaming reply into its document: open the region, fill it, close it.

Every write re-reads the document and changes only the reply region (see
:mod:`agentdoc.document.splice`), so the user can keep typing anywhere while the reply streams.
A stale editor copy saved over the region has it put back; a deleted region cancels the turn.

A streamed write whose region holds just what we wrote last (the common case: nobody typed in
it) is spliced at the byte level, and hashed for the ledger from the region on: the long
conversation above the reply is neither decoded, encoded nor hashed again on every write.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from agentdoc import document
from agentdoc.agents import LEGACY_AGENT, recorded_owner
from agentdoc.document import Spliced
from agentdoc.errors import AgentdocError, DocumentGone
from agentdoc.turn import detect

log = logging.getLogger(__name__)

EARLIER_WRITES = 64


# Seconds a document may be missing before the turn takes it as gone: Syncthing moves the old
# version aside (a conflict copy) before it renames the new one in, and some editors delete
# and recreate a file on save.
GONE_GRACE = 2.0


# A save written in place (truncated, then written) passes through an empty or partial file:
# a version without the reply is believed only once the file has stayed so for QUIET seconds.
QUIET = 0.05
SAVE_LANDS = 1.0  # seconds a save in progress may take to land
# Nobody takes a reply out by emptying the whole document: an empty file there is a save caught
# half-way, often another device's (its sync tool read the in-place save between the truncate
# and the write, and delivers the rest seconds later). The reply waits this long for the text.
EMPTY_GRACE = 10.0


def read_present(path: Path) -> bytes:
    """The document's bytes, a moment's absence waited out (see `GONE_GRACE`)."""
    deadline = time.monotonic() + GONE_GRACE
    while True:
        try:
            return document.read_bytes(path)
        except DocumentGone:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


class RegionGone(Exception):
    """The user deleted the streaming reply block: the turn is cancelled."""


def load(path: Path, known: document.Document | None = None) -> tuple[str, document.Document]:
    """The document as it is now; `known` (the version the caller already parsed) is reused
    when the file still holds exactly its text."""
    data = read_present(path)
    try:
        return _parsed(path, data, known)
    except AgentdocError:
        # Read in the middle of a save written in place (emptied, then written): the version
        # it lands as is the document, not the empty or partial file of that moment. An empty
        # file is waited out for as long as a save may take to land (`SAVE_LANDS`): on a loaded
        # machine the editor's write came more than one look (`QUIET`) after its truncate. Not
        # for longer: `agentdoc run` on a file that is empty for good says so after that second.
        landed = _landed(path, data, SAVE_LANDS)
        if landed is None:
            raise
        return _parsed(path, landed, known)


def _parsed(
    path: Path, data: bytes, known: document.Document | None
) -> tuple[str, document.Document]:
    text = document.decode(path, data)
    if known is not None and known.text == text:
        return text, known
    try:
        return text, document.parse(text)
    except (document.DocumentError, document.FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc


class ReplyWriter:
    """The reply region of one turn in one document, identified by its nonce."""

    def __init__(
        self, path: Path, ledger: document.WriteLedger, submit_marker: str, prompt: str
    ) -> None:
        self.path = path
        self.ledger = ledger
        self.submit_marker = submit_marker
        self.prompt = prompt
        self.markers = document.ReplyMarkers()
        self.nonce = self.markers.nonce
        self._written_body = ""
        # Bodies written this turn, oldest first: an editor may save a copy of any of them, and
        # the end marker says which one it was made from. Bounded: a copy older than this
        # is merged against the last write (nothing typed is lost, only alignment is rougher).
        self._earlier: deque[str] = deque(maxlen=EARLIER_WRITES)
        self._before = ""  # the document as it was just before the reply region was opened
        # The version the turn was started from, already parsed: `open` reuses it when the
        # file still holds exactly its text (most turns), instead of parsing it again.
        self.known: document.Document | None = None
        # The close put the fresh `## User` heading above text the user typed below the reply
        # while it streamed: that text is not a submitted prompt (see TurnOutcome.held).
        self.held = False
        self._digests = document.PrefixDigest()
        # The bytes of our last write and the stamp it left: while the file still has that
        # stamp, the next write starts from them instead of reading a long document again. A
        # save that the stamp would not show is still caught: the write swaps files atomically
        # and checks what it displaced (`atomic_write`).
        self._wrote: tuple[tuple[int, int, int], bytes] | None = None

    def update(
        self,
        transform: Callable[[str], str | None],
        splice: Callable[[bytes], Spliced | None] | None = None,
        *,
        durable: bool = True,
    ) -> None:
        """Re-read the document, apply `transform`, write it back atomically.

        `splice`, if given, is tried first on the bytes as read: the same change, for the case
        it can make without decoding the document (it returns None otherwise). `durable`: see
        `flush`.
        """
        on_disk = self._as_written() or read_present(self.path)
        spliced = splice(on_disk) if splice is not None else None
        if spliced is None:
            self._merge_and_write(transform, on_disk, on_disk, durable)
            return
        if spliced.unchanged:
            return
        rest = spliced.pieces()[1:]
        hashed = self._digests.digest(on_disk, spliced.start, rest)
        displaced = self._write(spliced.pieces(), on_disk, hashed, spliced.whole, durable)
        if displaced is not None:
            log.info("%s: a save landed while we wrote; merging it", self.path)
            self._merge_and_write(transform, displaced, spliced.whole(), durable)

    def last_written(self) -> str | None:
        """The document as this writer's last write left it (None: nothing written yet).

        What the turn left, even when a save has replaced the file since: an editor writing a
        buffer older than the reply makes a file that no longer shows the turn at all."""
        return None if self._wrote is None else document.decode(self.path, self._wrote[1])

    def _as_written(self) -> bytes | None:
        """The file's bytes if it is still as our last write left it (a stat, no read)."""
        if self._wrote is None:
            return None
        stamp, data = self._wrote
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return data if (st.st_mtime_ns, st.st_size, st.st_ino) == stamp else None

    def _write(
        self,
        data: bytes | list[bytes | memoryview],
        expected: bytes,
        hashed: str | None = None,
        whole: Callable[[], bytes] | None = None,
        durable: bool = True,
    ) -> bytes | None:
        """Write `data` over `expected` (see `atomic_write`), remembering what was written."""
        self._wrote = None
        stamps: list[tuple[int, int, int]] = []
        displaced = document.write_bytes(
            self.path,
            data,
            self.ledger,
            expected=expected,
            hashed=hashed,
            stamped=stamps.append,
            durable=durable,
        )
        if displaced is None and stamps:
            written = data if isinstance(data, bytes) else whole() if whole else b"".join(data)
            self._wrote = (stamps[-1], written)
        return displaced

    def _merge_and_write(
        self,
        transform: Callable[[str], str | None],
        base: bytes,
        on_disk: bytes,
        durable: bool = True,
    ) -> None:
        """Apply `transform` to `base` and write the result over `on_disk`.

        A save that lands between our read and our write is never overwritten by an older
        copy: the write swaps files atomically and hands back a displaced version we had not
        seen, and the merge is redone on it (our version stays on disk meanwhile).
        """
        for _ in range(10):
            new = transform(document.decode(self.path, base))
            if new is None:
                landed = _landed(self.path, on_disk, EMPTY_GRACE) if base is on_disk else None
                if landed is not None:
                    base = on_disk = landed  # read half-way through a save: judge it whole
                    continue
                if base is not on_disk:
                    # The displaced save removed the reply block: it is the user's version.
                    document.write_text(
                        self.path, document.decode(self.path, base), self.ledger, expected=on_disk
                    )
                raise RegionGone()
            data = new.encode("utf-8")
            if data == on_disk:
                return
            displaced = self._write(data, on_disk, durable=durable)
            if displaced is None:
                return
            log.info("%s: a save landed while we wrote; merging it", self.path)
            base, on_disk = displaced, data
        raise AgentdocError(f"{self.path}: the file keeps changing; could not write the reply")

    def open(self) -> None:
        marker = self.submit_marker

        known, self.known = self.known, None

        def transform(text: str) -> str:
            doc = known if known is not None and known.text == text else document.parse(text)
            notice = doc.unanswered()
            if notice is not None:
                # The failure notice of an earlier attempt at this prompt: this reply replaces
                # it (it holds nothing but agentdoc's own lines, see Document.unanswered).
                text = text[: notice.start]
                doc = document.parse(text)
            sub = detect.submission(doc, marker, require_marker=False)
            if sub is not None and sub.marker_line is not None:
                text = detect.remove_marker(text, sub.marker_line, marker)
                doc = document.parse(text)
            self._before = text
            last = doc.last_user()
            at = last.end if last is not None else len(text)
            return self.markers.open(text, at)

        self.update(transform)

    def _region(self, text: str) -> str | None:
        """`text` with our region in it: as it is, put back after a stale save, or None."""
        if self.markers.find(text) is not None:
            return text
        restored = detect.reattach(text, self._before, self.prompt, self.nonce)
        if restored is not None:
            log.warning("%s: an older copy was saved over the reply; putting it back", self.path)
            self._written_body = ""  # the region is empty again: nothing of the user's in it
            self._earlier.clear()
        return restored

    def flush(self, body: str, *, check: bool = False) -> None:
        """Write `body` into the region; with `check`, also look at the file when unchanged.

        Not durable (`atomic_write`): a streamed version is replaced within a second, and what
        a machine that stops would lose of it is in the turn journal, synced before each flush;
        the region's opening and closing writes are durable."""
        if body == self._written_body and not check:
            return

        def transform(text: str) -> str | None:
            current = self._region(text)
            if current is None:
                return None
            return self.markers.fill(current, body, self._written_body, self._earlier)

        def splice(data: bytes) -> Spliced | None:
            return self.markers.fill_bytes(data, body, self._written_body)

        self.update(transform, splice, durable=False)
        if body != self._written_body:
            if self._written_body:
                self._earlier.append(self._written_body)
            self._written_body = body

    def check(self) -> None:
        """Look at the file between writes: put back the region as last written if a stale save
        replaced it (RegionGone if it was deleted). New text waits for the next `flush`, so a
        look never adds a write to the pace the caller keeps."""
        self.flush(self._written_body, check=True)

    def close(
        self,
        final_body: str,
        session_id: str | None,
        *,
        next_prompt: bool = True,
        agent: str = LEGACY_AGENT,
    ) -> None:
        def transform(text: str) -> str | None:
            current = self._region(text)
            if current is None:
                return None
            self.held = next_prompt and self.markers.typed_below(current)
            closed = self.markers.close(
                current,
                final_body,
                self._written_body,
                self._earlier,
                next_prompt=next_prompt,
            )
            if closed is None or not session_id:
                return closed
            owner = recorded_owner(agent)
            # A point to resume from (`undo`) served its purpose once the session moved on.
            updates = {"session": session_id, "session_agent": owner, "resume_at": None}
            return document.set_meta(closed, updates)

        self.update(transform)


def _landed(path: Path, seen: bytes, empty_grace: float = 0.0) -> bytes | None:
    """The file once the save `seen` may have been read in the middle of has landed; None if
    it stays `seen` (a save that did remove the reply). An empty file is waited out for
    `empty_grace` seconds (see `EMPTY_GRACE`)."""
    start = time.monotonic()
    last, deadline = seen, start + SAVE_LANDS
    while True:
        time.sleep(QUIET)
        now = read_present(path)
        if not now.strip() and time.monotonic() < start + empty_grace:
            last = now
            continue
        if now == last or time.monotonic() > deadline:
            return None if now == seen else now
        last = now
