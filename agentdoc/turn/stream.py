"""One agent's events into the reply: the loop that streams a turn into its document.

`ReplyStream.pump` takes the agent's neutral events into a `ReplyBuilder` and writes the reply
through the `ReplyWriter` at most once per `flush_interval` (backing off as the reply grows),
passes a tool's permission request to the person and their answer back, and stops the agent on
a cancel (the request file, the person deleting the block) or when it is silent for longer than
`stall_timeout`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents import (
    END,
    STALLED,
    Activity,
    AgentTurn,
    EndOfStream,
    Event,
    PermissionAsked,
    PermissionWithdrawn,
    Reply,
    ReplyBuilder,
)
from agentdoc.config import Settings
from agentdoc.document import ThinkingSidecar, render_body, retry_words
from agentdoc.records import Journal, take_cancel_request
from agentdoc.turn.approvals import Approvals
from agentdoc.turn.ending import Problem, TurnEnding
from agentdoc.turn.session import TurnPlan
from agentdoc.turn.writer import ReplyWriter

IDLE_CHECK = 0.5  # seconds: how often a silent stream still looks at the document
# Re-rendering a long reply costs time in proportion to its length; waiting this many times the
# last write's cost before the next one keeps streaming writes to a fifth of a core, however long
# the reply grows (a 400 KB reply used to take most of a core).
WRITE_BACKOFF = 4.0
# While an agent streams, its events are taken in batches this far apart rather than one
# wake-up of the turn's thread per line: a thread's wake-up costs more CPU than the line's
# parse. The first event after a quiet spell is taken at once, so the first word is not delayed.
STREAM_PACE = 0.02
# Once the reply's first text is in the document, the text reaches it only at each flush (a
# quarter of a second apart): taking events sooner shows nothing sooner, and a model's pace would
# wake the thread fifty times a second. The thread sleeps till the next flush is due, at least
# this long (a pause shows as soon as before: see `_next_event`).
STREAMING_PACE = 0.05


@dataclass
class ReplyStream:
    """The streaming part of one turn, built by `TurnRunner` from the parts they share."""

    path: Path
    settings: Settings
    cancel: threading.Event
    writer: ReplyWriter
    approvals: Approvals
    journal: Journal
    ending: TurnEnding
    thinking_on: bool
    proc: AgentTurn | None = None
    turn: int = 0
    shown_text: bool = False  # the reply's first text has been written

    def pump(
        self,
        plan: TurnPlan,
        proc: AgentTurn,
        builder: ReplyBuilder,
        sidecar: ThinkingSidecar,
    ) -> tuple[bool, Problem | None]:
        """Feed the agent's events into the builder, flushing to the document: whether it was
        cancelled, and why agentdoc stopped the agent if it did."""
        self.proc, self.turn = proc, plan.turn
        interval = self.settings.flush_interval
        last_flush = last_line = last_check = last_look = time.monotonic()
        dirty = False
        while True:
            event = self._next_event(proc, last_line, last_flush + interval)
            now = time.monotonic()
            if now - last_check >= 0.1:  # look for a cancel request file ten times a second
                last_check = now
                if take_cancel_request(self.path):
                    self.cancel.set()
            if self.cancel.is_set():
                proc.stop()
                self._drain(proc, builder)
                return True, None
            if event is END:
                return False, None
            if self.approvals.waiting is not None:
                last_line = now  # waiting for the person is not a stall
                if self._answer(builder, now):
                    dirty, last_flush = True, 0.0
            if event is None:
                if now - max(last_flush, last_look) >= IDLE_CHECK and self.approvals.may_flush:
                    # Nothing new from the CLI, but the user may have deleted the block (a
                    # cancel) or saved a stale copy over it (put it back) meanwhile. Only a
                    # look: the batched reads return None between deltas, and new text here
                    # would be written every IDLE_CHECK, faster than a synced folder's pace.
                    # Timed apart from the writes, or each look would put the next one off.
                    self.writer.check()
                    last_look = now
                if now - last_line > self.settings.stall_timeout:
                    return False, self._stall(plan, proc, builder)
            elif self._feed(builder, event):
                last_line, dirty = now, True
                if builder.ended:  # the agent's end of the turn, whatever still holds its output
                    return False, None
            else:
                last_line = now
            if dirty and (now - last_flush >= interval or self._first_text(builder)):
                self._publish(plan, builder.reply, sidecar)
                last_flush, dirty = time.monotonic(), False
                interval = max(self.settings.flush_interval, WRITE_BACKOFF * (last_flush - now))

    def _stall(self, plan: TurnPlan, proc: AgentTurn, builder: ReplyBuilder) -> Problem:
        """The agent said nothing for `stall_timeout`: stopped, and told why."""
        stalled = Problem(
            f"no output from {plan.request.agent} for "
            f"{self.settings.stall_timeout:.0f} s; "
            "the turn was stopped (stall timeout)",
            STALLED,
        )
        proc.stop()
        self._drain(proc, builder)
        return stalled

    def _next_event(
        self, proc: AgentTurn, last_line: float, due: float
    ) -> Event | EndOfStream | None:
        """The agent's next event, or None after a wait; see STREAM_PACE. `due`: when the
        next flush may be written."""
        event = proc.next_event(0)
        pace = STREAMING_PACE if self.shown_text else STREAM_PACE
        if event is not None or time.monotonic() - last_line > 2 * pace:
            return event if event is not None else proc.next_event(0.1)
        if self.shown_text and self.approvals.waiting is None:
            # An approval's answer is still looked for at the pace, so it goes out as soon.
            pace = max(pace, due - time.monotonic())
        self.cancel.wait(pace)
        return proc.next_event(0)

    def _first_text(self, builder: ReplyBuilder) -> bool:
        """The reply's first text has arrived and is not in the document yet: it is written at
        once, so the person sees the reply start; later text is coalesced per flush interval."""
        if self.shown_text:
            return False
        # Only until the first text: the reply is rebuilt for this, which later events avoid.
        self.shown_text = bool(builder.reply.text())
        return self.shown_text

    def _feed(self, builder: ReplyBuilder, event: Event | EndOfStream) -> bool:
        """Take one event; True if it may change the reply."""
        if isinstance(event, EndOfStream | Activity):
            return False
        if isinstance(event, PermissionAsked):
            self._ask(builder, event)
        elif isinstance(event, PermissionWithdrawn):
            self.approvals.withdraw(event.request_id)
        else:
            builder.feed(event)
        return True

    # -- tool permission requests ------------------------------------------------------------

    def _ask(self, builder: ReplyBuilder, request: PermissionAsked) -> None:
        if self.approvals.ask(request, self.proc):
            return  # refused without asking
        # Written at once (not at the next flush), so the person sees it while we wait.
        self.writer.flush(self._body(builder.reply))
        reply = builder.reply
        self.ending.progress(
            self.turn,
            "waiting",
            reply.output_chars,
            reply.session_id,
            request.tool_name,
            reply=reply,  # the tool's block, for whoever asks the person what it would do
        )

    def _answer(self, builder: ReplyBuilder, now: float) -> bool:
        """Pass on the answers found now; True if any. Then the turn streams again."""
        answered = self.approvals.pass_on(now, self.writer, self.proc)
        if answered and self.approvals.waiting is None:
            reply = builder.reply
            self.ending.progress(self.turn, "streaming", reply.output_chars, reply.session_id)
        return answered

    def _body(self, reply: Reply, *, final: bool = False) -> str:
        return render_body(reply, final=final, approvals=self.approvals.shown)

    def _drain(self, proc: AgentTurn, builder: ReplyBuilder) -> None:
        while (event := proc.next_event(0)) is not None and event is not END:
            self._feed(builder, event)

    def _publish(self, plan: TurnPlan, reply: Reply, sidecar: ThinkingSidecar) -> None:
        # The journal gets the text at each write, not at each delta: it is synced only here,
        # so what a crash leaves of it is the same, at a fraction of the cost.
        if self.proc is not None and self.proc.pid != self.journal.pid:
            # The turn was begun again on a fresh process (its warm one had died unheard).
            self.journal.note_process(self.proc.pid)
        self.journal.record(reply.text())
        self.journal.sync()
        if self.thinking_on:
            sidecar.update(reply.thinking, reply.session_id)
        self.writer.flush(self._body(reply))
        tool = self.approvals.waiting
        state = "waiting" if tool else "retrying" if reply.retry is not None else "streaming"
        # The live line says what is retried (the document shows it too, below the reply).
        detail = tool or (retry_words(reply.retry) if reply.retry is not None else "")
        self.ending.progress(
            plan.turn, state, reply.output_chars, reply.session_id, detail, reply=reply
        )
