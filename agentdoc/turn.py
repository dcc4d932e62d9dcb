"""One conversation turn, end to end: prompt → CLI → streamed reply → document.

Every write re-reads the document and changes only the reply region (see `splice`), so the user
can keep typing anywhere while the reply streams. Writes are coalesced to one per
`flush_interval`. The turn ends when the CLI's output ends, when it is cancelled (a `cancel`
event, or the user deleting the streaming block), or when the stream is silent for longer than
`stall_timeout`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentdoc import (
    detect,
    document,
    frontmatter,
    history,
    journal,
    splice,
    status,
    stream,
    thinking,
)
from agentdoc.claude import ClaudeProcess, spawn
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError, ClaudeNotFound, NoPendingPrompt
from agentdoc.fileio import WriteLedger, decode, read_bytes, write_text
from agentdoc.reattach import reattach
from agentdoc.render import render_body, render_final
from agentdoc.reply import Reply, ReplyBuilder
from agentdoc.session import Mode, TurnPlan, prepare_turn

log = logging.getLogger(__name__)

EARLIER_WRITES = 64
IDLE_CHECK = 0.5  # seconds: how often a silent stream still looks at the document


@dataclass(frozen=True)
class Progress:
    path: Path
    turn: int
    state: str  # "starting", "streaming", "retrying", "done", "failed", "interrupted", "cancelled"
    elapsed: float
    output_chars: int
    session_id: str | None
    detail: str = ""
    reply: Reply | None = None  # the snapshot behind this report (for echoing the reply)


@dataclass(frozen=True)
class TurnOutcome:
    path: Path
    turn: int
    reply: Reply
    state: str  # "done", "failed", "interrupted", "cancelled"
    session_id: str | None
    elapsed: float


class RegionGone(Exception):
    """The user deleted the streaming reply block: the turn is cancelled."""


def load(path: Path) -> tuple[str, document.Document]:
    text = decode(path, read_bytes(path))
    try:
        return text, document.parse(text)
    except (document.DocumentError, frontmatter.FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc


class TurnRunner:
    def __init__(
        self,
        path: Path,
        settings: Settings,
        *,
        mode: Mode = "run",
        session: str | None = None,
        model: str | None = None,
        ledger: WriteLedger | None = None,
        environ: Mapping[str, str] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
        require_marker: bool = False,
    ) -> None:
        self.path = path
        self.settings = settings
        self.mode: Mode = mode
        self.session = session
        self.model = model
        self.ledger = ledger or WriteLedger()
        self.environ = environ
        self.on_progress = on_progress or (lambda _p: None)
        self.cancel = cancel or threading.Event()
        self.require_marker = require_marker
        self._status = status.Status(document=path.name, state="idle", updated=status.now_iso())
        self.nonce = splice.new_nonce()
        self._written_body = ""
        # Bodies written this turn, oldest first: an editor may save a copy of any of them, and
        # the end marker says which one it was made from. Bounded: a copy older than this
        # is merged against the last write (nothing typed is lost, only alignment is rougher).
        self._earlier: deque[str] = deque(maxlen=EARLIER_WRITES)
        self._started = time.monotonic()
        self._problem: str | None = None
        self._before = ""  # the document as it was just before the reply region was opened
        self._prompt = ""
        self._thinking_on = settings.thinking

    # -- document writes -------------------------------------------------------------------

    def _update(self, transform: Callable[[str], str | None]) -> None:
        """Re-read the document, apply `transform`, write it back atomically.

        A save that lands between our read and our write is never overwritten by an older
        copy: the write swaps files atomically and hands back a displaced version we had not
        seen, and the merge is redone on it (our version stays on disk meanwhile).
        """
        base = on_disk = read_bytes(self.path)
        for _ in range(10):
            new = transform(decode(self.path, base))
            if new is None:
                if base is not on_disk:
                    # The displaced save removed the reply block: it is the user's version.
                    write_text(self.path, decode(self.path, base), self.ledger, expected=on_disk)
                raise RegionGone()
            data = new.encode("utf-8")
            if data == on_disk:
                return
            displaced = write_text(self.path, new, self.ledger, expected=on_disk)
            if displaced is None:
                return
            log.info("%s: a save landed while we wrote; merging it", self.path)
            base, on_disk = displaced, data
        raise AgentdocError(f"{self.path}: the file keeps changing; could not write the reply")

    def _open(self) -> None:
        marker = self.settings.submit_marker

        def transform(text: str) -> str:
            doc = document.parse(text)
            sub = detect.submission(doc, marker, require_marker=False)
            if sub is not None and sub.marker_line is not None:
                text = detect.remove_marker(text, sub.marker_line, marker)
                doc = document.parse(text)
            self._before = text
            last = doc.last_user()
            at = last.end if last is not None else len(text)
            return splice.open_reply(text, at, self.nonce)

        self._update(transform)

    def _region(self, text: str) -> str | None:
        """`text` with our region in it: as it is, put back after a stale save, or None."""
        if splice.find_region(text, self.nonce) is not None:
            return text
        restored = reattach(text, self._before, self._prompt, self.nonce)
        if restored is not None:
            log.warning("%s: an older copy was saved over the reply; putting it back", self.path)
            self._written_body = ""  # the region is empty again: nothing of the user's in it
            self._earlier.clear()
        return restored

    def _flush(self, body: str, *, check: bool = False) -> None:
        """Write `body` into the region; with `check`, also look at the file when unchanged."""
        if body == self._written_body and not check:
            return

        def transform(text: str) -> str | None:
            current = self._region(text)
            if current is None:
                return None
            return splice.fill_region(current, self.nonce, body, self._written_body, self._earlier)

        self._update(transform)
        if body != self._written_body:
            if self._written_body:
                self._earlier.append(self._written_body)
            self._written_body = body

    def _close(self, final_body: str, session_id: str | None) -> None:
        def transform(text: str) -> str | None:
            current = self._region(text)
            if current is None:
                return None
            closed = splice.close_region(
                current, self.nonce, final_body, self._written_body, self._earlier
            )
            if closed is None or not session_id:
                return closed
            return frontmatter.set_meta(closed, {"session": session_id})

        self._update(transform)

    # -- the turn ---------------------------------------------------------------------------

    def run(self) -> TurnOutcome:
        _text, doc = load(self.path)
        sub = detect.submission(
            doc, self.settings.submit_marker, require_marker=self.require_marker
        )
        if sub is None:
            raise NoPendingPrompt(
                f"{self.path}: nothing to send. Write your prompt under the last `## User` "
                "heading, then run this again."
            )
        prompt = self._prompt = sub.prompt
        plan = prepare_turn(
            self.path,
            doc,
            prompt,
            self.mode,
            self.settings,
            session=self.session,
            model=self.model,
            environ=self.environ,
        )
        self._thinking_on = self.settings.thinking and doc.meta.thinking is not False
        self._started = time.monotonic()
        status.take_cancel_request(self.path)  # a stale request must not cancel this new turn
        self._journal = journal.Journal(
            self.path,
            self.nonce,
            plan.request.prompt,
            plan.request.resume or plan.request.session_id,
        )
        try:
            return self._run(plan, doc)
        except AgentdocError as exc:
            # One-shot runs have no daemon to record this: the status must not say streaming.
            self._write_status(plan.turn, "failed", 0, None, str(exc))
            raise
        finally:
            self._journal.close()

    def _run(self, plan: TurnPlan, doc: document.Document) -> TurnOutcome:
        self._open()
        self._progress(plan.turn, "starting", 0, plan.request.session_id)
        started_at = datetime.now(UTC)
        sidecar = thinking.ThinkingSidecar(self.path, plan.turn, started_at, self.ledger)
        attempt = self._attempt(plan, sidecar)
        if isinstance(attempt, TurnOutcome):
            return attempt
        builder, cancelled = attempt
        if plan.fallback is not None and not cancelled and _session_lost(builder.reply):
            # The store check passed but the CLI disagrees: rebuild within this same turn
            # rather than leave an error the user can do nothing about.
            log.warning("%s: %s; %s", self.path, builder.reply.error, plan.fallback.note)
            plan = plan.fallback
            self._progress(plan.turn, "starting", 0, plan.request.session_id, plan.note or "")
            attempt = self._attempt(plan, sidecar)
            if isinstance(attempt, TurnOutcome):
                return attempt
            builder, cancelled = attempt
        return self._finish(plan, builder, sidecar, cancelled=cancelled)

    def _attempt(
        self, plan: TurnPlan, sidecar: thinking.ThinkingSidecar
    ) -> tuple[ReplyBuilder, bool] | TurnOutcome:
        """Run the CLI once: its reply and whether it was cancelled, or the turn's end."""
        builder = ReplyBuilder()
        try:
            proc = spawn(plan.request, self.settings, self.environ)
            self._journal.note_process(proc.pid)
        except ClaudeNotFound as exc:
            self._problem = str(exc)
            builder.finish(exit_code=None, stderr="")
            return self._finish(plan, builder, sidecar, cancelled=False)
        cancelled = False
        try:
            cancelled = self._pump(plan, proc, builder, sidecar)
        except RegionGone:
            log.info("%s: the streaming reply was deleted; cancelling the turn", self.path)
            proc.stop()
            proc.wait()
            return self._outcome(plan, builder.reply, "cancelled")
        except BaseException:
            proc.stop()
            proc.wait()
            raise
        code = proc.wait()
        builder.finish(exit_code=code, stderr=proc.stderr)
        return builder, cancelled

    def _pump(
        self,
        plan: TurnPlan,
        proc: ClaudeProcess,
        builder: ReplyBuilder,
        sidecar: thinking.ThinkingSidecar,
    ) -> bool:
        """Feed CLI output into the builder, flushing to the document; True if cancelled."""
        interval = self.settings.flush_interval
        last_flush = last_line = last_check = time.monotonic()
        dirty = False
        while True:
            line = proc.next_line(0.1)
            now = time.monotonic()
            if now - last_check >= 0.1:  # look for a cancel request file ten times a second
                last_check = now
                if status.take_cancel_request(self.path):
                    self.cancel.set()
            if self.cancel.is_set():
                proc.stop()
                self._drain(proc, builder)
                return True
            if line == b"":
                return False
            if line is None:
                if now - last_flush >= IDLE_CHECK:
                    # Nothing new from the CLI, but the user may have deleted the block (a
                    # cancel) or saved a stale copy over it (put it back) meanwhile.
                    self._flush(render_body(builder.reply, final=False), check=True)
                    last_flush = now
                if now - last_line > self.settings.stall_timeout:
                    self._problem = (
                        f"no output from Claude for {self.settings.stall_timeout:.0f} s; "
                        "the turn was stopped (stall timeout)"
                    )
                    proc.stop()
                    self._drain(proc, builder)
                    return False
            elif self._feed(builder, line):
                last_line, dirty = now, True
                self._journal.record(builder.reply.text())
            else:
                last_line = now
            if dirty and now - last_flush >= interval:
                self._journal.sync()
                self._publish(plan, builder.reply, sidecar)
                last_flush, dirty = now, False

    def _feed(self, builder: ReplyBuilder, line: bytes) -> bool:
        try:
            event = stream.parse_line(line)
        except stream.StreamError as exc:
            log.warning("%s: skipping a corrupt line from claude: %s", self.path, exc)
            return False
        if event is None:
            return False
        builder.feed(event)
        return True

    def _drain(self, proc: ClaudeProcess, builder: ReplyBuilder) -> None:
        while (line := proc.next_line(0)) not in (None, b""):
            assert line is not None
            self._feed(builder, line)

    def _publish(self, plan: TurnPlan, reply: Reply, sidecar: thinking.ThinkingSidecar) -> None:
        if self._thinking_on:
            sidecar.update(reply.thinking, reply.session_id)
        self._flush(render_body(reply, final=False))
        state = "retrying" if reply.retry is not None else "streaming"
        self._progress(plan.turn, state, reply.output_chars, reply.session_id, reply=reply)

    def _finish(
        self,
        plan: TurnPlan,
        builder: ReplyBuilder,
        sidecar: thinking.ThinkingSidecar,
        *,
        cancelled: bool,
    ) -> TurnOutcome:
        reply = builder.reply
        if self._problem is not None:
            reply = dataclasses.replace(reply, error=self._problem)
        elif cancelled and reply.error is None:
            reply = dataclasses.replace(reply, interrupted=True)
        has_thinking = self._thinking_on and sidecar.update(reply.thinking, reply.session_id)
        elapsed = time.monotonic() - self._started
        body = render_final(
            reply,
            elapsed=elapsed,
            document_name=self.path.name,
            thinking_link=thinking.link(self.path, plan.turn) if has_thinking else None,
            footer=self.settings.footer,
            note=plan.note,
        )
        # Only an id the CLI reported: one we chose for a CLI that never started names nothing.
        session_id = reply.session_id
        if _session_lost(reply):
            session_id = None
        try:
            self._close(body, session_id)
        except RegionGone:
            return self._outcome(plan, reply, "cancelled")
        history.record_turn(self.path, plan.known, plan.turn, session_id)
        state = (
            "cancelled"
            if cancelled
            else "failed"
            if reply.error is not None
            else "interrupted"
            if reply.interrupted
            else "done"
        )
        detail = reply.error or (
            "the reply was interrupted before it finished" if state == "interrupted" else ""
        )
        self._progress(plan.turn, state, reply.output_chars, session_id, detail, reply)
        return self._outcome(plan, reply, state, session_id)

    def _outcome(
        self, plan: TurnPlan, reply: Reply, state: str, session_id: str | None = None
    ) -> TurnOutcome:
        return TurnOutcome(
            path=self.path,
            turn=plan.turn,
            reply=reply,
            state=state,
            session_id=session_id or reply.session_id,
            elapsed=time.monotonic() - self._started,
        )

    def _progress(
        self,
        turn: int,
        state: str,
        chars: int,
        session_id: str | None,
        detail: str = "",
        reply: Reply | None = None,
    ) -> None:
        elapsed = time.monotonic() - self._started
        self.on_progress(
            Progress(self.path, turn, state, elapsed, chars, session_id, detail, reply)
        )
        self._write_status(turn, state, chars, session_id, detail)

    def _write_status(
        self, turn: int, state: str, chars: int, session_id: str | None, detail: str
    ) -> None:
        previous = self._status
        now = status.now_iso()
        shown: status.State = (
            "streaming"
            if state in ("starting", "streaming", "retrying")
            else "error"
            if state in ("failed", "interrupted")
            else "idle"
        )
        # Streaming progress is rewritten at most about once a second; state changes at once.
        if shown == previous.state == "streaming" and previous.updated == now:
            return
        self._status = previous.model_copy(
            update={
                "state": shown,
                "turn": turn,
                "session": session_id or previous.session,
                "started": now if state == "starting" else previous.started,
                "updated": now,
                "tokens": chars // 4,
                "error": (detail or None) if shown == "error" else None,
                "pid": os.getpid() if shown == "streaming" else None,
            }
        )
        status.write_status(self.path, self._status)


def _session_lost(reply: Reply) -> bool:
    return reply.error is not None and "No conversation found" in reply.error
