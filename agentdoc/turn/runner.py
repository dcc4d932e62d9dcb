"""One conversation turn, end to end: prompt → agent → streamed reply → document.

The reply region is written by :class:`~agentdoc.turn.writer.ReplyWriter`, at most once per
`flush_interval`. The turn ends when the agent's output ends, when it is cancelled (a `cancel`
event, or the user deleting the streaming block), or when the stream is silent for longer than
`stall_timeout`; what is written then is :class:`~agentdoc.turn.ending.TurnEnding`'s part.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from agentdoc.agents import (
    END,
    STALLED,
    Activity,
    AgentRequest,
    AgentTurn,
    Clearance,
    EndOfStream,
    Event,
    PermissionAsked,
    PermissionWithdrawn,
    Reply,
    ReplyBuilder,
    start_turn,
)
from agentdoc.config import Settings
from agentdoc.document import (
    Document,
    ThinkingSidecar,
    WriteLedger,
    check_replaceable,
    render_body,
    render_refusal,
    retry_words,
)
from agentdoc.errors import AgentCannotStart, AgentdocError, NoPendingPrompt, PromptRefused
from agentdoc.records import Journal, StatusReporter, marked, take_cancel_request
from agentdoc.records import before_turn as snapshot_before
from agentdoc.records import carried as carried_reasons
from agentdoc.records import drop as drop_reasons
from agentdoc.turn import detect, presets
from agentdoc.turn.approvals import Approvals
from agentdoc.turn.ending import Problem, TurnEnding
from agentdoc.turn.outcome import Progress, TurnOutcome, session_lost
from agentdoc.turn.session import Mode, TurnPlan, prepare_turn
from agentdoc.turn.whose import check_agent
from agentdoc.turn.writer import RegionGone, ReplyWriter, load

log = logging.getLogger(__name__)

IDLE_CHECK = 0.5  # seconds: how often a silent stream still looks at the document
# Re-rendering a long reply costs time in proportion to its length; waiting this many times the
# last write's cost before the next one keeps streaming writes to a fifth of a core, however long
# the reply grows (a 400 KB reply used to take most of a core).
WRITE_BACKOFF = 4.0
# After its `result` line the CLI only saves its session and exits; a CLI (or a wrapper script's
# leftover child) still running this long after that is stopped, the reply is complete.
RESULT_GRACE = 5.0
# While an agent streams, its events are taken in batches this far apart rather than one
# wake-up of the turn's thread per line: a thread's wake-up costs more CPU than the line's
# parse. The first event after a quiet spell is taken at once, so the first word is not delayed.
STREAM_PACE = 0.02

# Starts the agent for a turn: a fresh process (`start_turn`), or a warm process's next turn.
Launcher = Callable[[AgentRequest, Settings, Mapping[str, str] | None], AgentTurn]
# The gate's leave to start the document's agent in a working folder, for the document as
# parsed (its `git: sync`); AgentdocError when refused. Without it no agent process starts.
Clearer = Callable[[Path, Document], Clearance]


class _ToolsAfter(threading.Event):
    """`AgentRequest.tools_after`, set when the turn's undo snapshot is complete. The snapshot
    starts at `asked`: once the agent has been asked, or once anything waits for it."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.asked.set()
        return super().wait(timeout)


class TurnRunner:
    def __init__(
        self,
        path: Path,
        settings: Settings,
        *,
        clear: Clearer,
        mode: Mode = "run",
        session: str | None = None,
        model: str | None = None,
        ledger: WriteLedger | None = None,
        environ: Mapping[str, str] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
        require_marker: bool = False,
        launcher: Launcher = start_turn,
        notice_start_failure: bool = False,
        parsed: Document | None = None,
    ) -> None:
        """`notice_start_failure`: a CLI that cannot start is told in the document, as a failure
        notice that keeps the prompt pending (the daemon, whose terminal nobody may watch),
        instead of raised with the file untouched (`agentdoc run`, which prints it).
        `parsed`: the version the caller already parsed, not parsed again if still current."""
        self.path = path
        self.settings = settings
        self.clear = clear
        self._leave: Clearance | None = None  # the gate's, once the turn knows its cwd
        self.mode: Mode = mode
        self.session = session
        self.model = model
        self.ledger = ledger or WriteLedger()
        self.environ = marked(environ)  # every agent it starts says who started it
        self.on_progress = on_progress or (lambda _p: None)
        self.cancel = cancel or threading.Event()
        self.require_marker = require_marker
        self.launcher = launcher
        self.notice_start_failure = notice_start_failure
        self._parsed = parsed
        self._status = StatusReporter(path)
        self._writer = ReplyWriter(path, self.ledger, settings.submit_marker, "")
        self._thinking_on = settings.thinking
        self._approvals = Approvals(path, self.ledger, settings.approval_timeout)
        self._proc: AgentTurn | None = None
        self._turn = 0
        self._said = 0  # kept answers the running turn's prompt carries (records/reasons.py)
        self._shown_text = False  # the reply's first text has been written
        self._ending: TurnEnding | None = None  # built when the turn starts
        # Set when the turn's undo snapshot is complete; the agent's tools wait for it.
        self._tools_after = _ToolsAfter()
        self._snapping: threading.Thread | None = None

    @property
    def _end(self) -> TurnEnding:
        assert self._ending is not None, "the turn has not started"
        return self._ending

    def note_queued(self) -> None:
        """A prompt was saved below this reply; it is sent when the turn ends (the status says
        so meanwhile). Safe to call from another thread."""
        self._status.note_queued()

    # -- the turn ---------------------------------------------------------------------------

    def run(self) -> TurnOutcome:
        _text, doc = load(self.path, self._parsed)
        self._parsed = None  # only the first look: a later one reads the file as it is
        self._writer.known = doc  # the reply opens in this very version, most of the time
        sub = detect.submission(
            doc, self.settings.submit_marker, require_marker=self.require_marker
        )
        if sub is None:
            raise NoPendingPrompt(
                f"{self.path}: nothing to send. Write your prompt under the last `## User` "
                f"heading, then run this again.{detect.heading_hint(doc)}"
            )
        if unknown := detect.unknown_keys(doc):
            known = ", ".join(type(doc.meta).model_fields)
            log.warning(
                "%s: ignoring unknown key%s under `agentdoc:`: %s (known keys: %s)",
                self.path,
                "s" if len(unknown) > 1 else "",
                ", ".join(unknown),
                known,
            )
        try:
            doc, include = presets.apply_preset(doc)
        except PromptRefused as exc:
            self._refuse(doc.turn_count() + 1, exc)
            raise
        agent = check_agent(self.path, doc, self.settings)
        prompt = self._writer.prompt = sub.prompt
        try:
            plan = prepare_turn(
                self.path,
                doc,
                presets.first_prompt(prompt, doc, include),
                self.mode,
                self.settings,
                session=self.session,
                model=self.model,
                environ=self.environ,
                agent=agent,
            )
        except PromptRefused as exc:
            self._refuse(doc.turn_count() + 1, exc)
            raise
        self._approvals.agent = plan.request.agent
        self._approvals.standard = agent.agent.can.standard_approval
        self._approvals.carries_reason = agent.agent.can.answer_has_reason
        self._approvals.title = agent.title
        self._thinking_on = self.settings.thinking and doc.meta.thinking is not False
        take_cancel_request(self.path)  # a stale request must not cancel this new turn
        self._journal = Journal(
            self.path,
            self._writer.nonce,
            plan.request.prompt,
            plan.request.resume or plan.request.session_id,
        )
        self._ending = TurnEnding(
            self.path,
            self.settings,
            self.environ,
            self.on_progress,
            self._status,
            self._writer,
            self._approvals,
            self._journal,
            self._thinking_on,
        )
        try:
            return self._run(plan, doc)
        except AgentdocError as exc:
            # One-shot runs have no daemon to record this: the status must not say streaming.
            self._status.report(plan.turn, "failed", 0, None, str(exc))
            raise
        finally:
            self._tools_after.asked.set()  # a turn that never asked its agent
            self._snapshot_taken()
            self._tools_after.set()  # a snapshot never started holds nothing back
            self._journal.close()

    def _refuse(self, turn: int, exc: PromptRefused) -> None:
        """Nothing was sent: say why where the reply would be; the prompt stays pending."""
        self._writer.open()
        self._writer.close(render_refusal(str(exc), self.path.name), None, next_prompt=False)
        self._status.report(turn, "failed", 0, None, str(exc))

    def _run(self, plan: TurnPlan, doc: Document) -> TurnOutcome:
        # Leave first: nothing runs in a folder the gate refuses, not even git for the snapshot.
        try:
            self._leave = self.clear(plan.request.cwd, doc)
        except AgentdocError as exc:
            if not self.notice_start_failure:
                raise
            return self._end.end_not_started(plan, exc)
        # What the agent may change, as it is before it can: `undo` takes the turn's changes back.
        # Only the prompt is on the way from the save to the request: the snapshot runs beside
        # it, and `tools_after` (set when the snapshot is complete) keeps every tool of the turn
        # from running before. The agent holds its tools until then where it can (the Claude
        # CLI calls a hook before each tool, whatever its permission mode, and waits for the
        # answer); where it cannot (ACP, a one-shot CLI's stdin) the prompt itself waits.
        self._snapshot(plan)
        # A document its owner made read-only, or in a folder that takes no new file (every
        # write is a temp file renamed over it), has nowhere for the reply: refused before the
        # agent starts, so the prompt is never sent for it.
        check_replaceable(self.path)
        # Started before the document is touched: a CLI that cannot start (missing, not
        # executable, a value argv cannot carry) is the user's to fix, and the file stays as is.
        try:
            proc = self._spawn(plan)
        except PromptRefused as exc:  # e.g. pictures for an agent that takes none
            self._refuse(plan.turn, exc)
            raise
        except AgentdocError as exc:
            if not self.notice_start_failure:
                raise
            return self._end.end_not_started(plan, exc)
        try:
            self._writer.open()
        except BaseException:
            proc.stop()
            proc.close(RESULT_GRACE)
            raise
        self._end.progress(plan.turn, "starting", 0, plan.request.session_id)
        started_at = datetime.now(UTC)
        sidecar = ThinkingSidecar(self.path, plan.turn, started_at, self.ledger)
        attempt = self._attempt(plan, sidecar, proc)
        if isinstance(attempt, TurnOutcome):
            return attempt
        builder, cancelled, problem = attempt
        if plan.fallback is not None and not cancelled and session_lost(builder.reply):
            # The store check passed but the CLI disagrees: rebuild within this same turn
            # rather than leave an error the user can do nothing about.
            log.warning("%s: %s; %s", self.path, builder.reply.error, plan.fallback.note)
            plan = plan.fallback
            self._end.progress(plan.turn, "starting", 0, plan.request.session_id, plan.note or "")
            attempt = self._attempt(plan, sidecar)
            if isinstance(attempt, TurnOutcome):
                return attempt
            builder, cancelled, problem = attempt
        self._snapshot_taken()
        return self._end.finish(plan, builder, sidecar, cancelled=cancelled, problem=problem)

    def _snapshot(self, plan: TurnPlan) -> None:
        """Start the turn's undo snapshot on a thread of its own; see `_run`."""
        done = self._tools_after

        def take() -> None:
            # Its git processes start once the prompt is out (or the agent waits for them):
            # on a busy machine they would otherwise compete with sending it.
            done.asked.wait()
            try:  # never raises (it logs), but the agent must never wait for ever
                snapshot_before(
                    self.path, plan.turn, plan.request.cwd, self.settings.add_dirs, self.environ
                )
            finally:
                done.set()

        self._snapping = threading.Thread(target=take, name="agentdoc-snapshot", daemon=True)
        self._snapping.start()

    def _snapshot_taken(self) -> None:
        """Wait for the snapshot: what follows it (the record after the turn, the next turn's
        snapshot) works on the same shadow repository."""
        if self._snapping is not None:
            self._snapping.join()
            self._snapping = None

    def _spawn(self, plan: TurnPlan) -> AgentTurn:
        # What the person said to the last turn's tool requests, where the agent's answers had
        # no room for it: this prompt carries it (the agent sends it only in that session).
        said = () if self._approvals.carries_reason else carried_reasons(self.path)
        request = dataclasses.replace(
            plan.request,
            turn=plan.turn,
            said_before=said,
            clearance=self._leave,
            tools_after=self._tools_after,
        )
        self._said = len(said)
        try:
            proc = self.launcher(request, self.settings, self.environ)
        finally:
            self._tools_after.asked.set()
        self._journal.note_process(proc.pid)
        return proc

    def _attempt(
        self, plan: TurnPlan, sidecar: ThinkingSidecar, proc: AgentTurn | None = None
    ) -> tuple[ReplyBuilder, bool, Problem | None] | TurnOutcome:
        """Run the agent once: its reply, whether it was cancelled and why agentdoc stopped it
        (if it did), or the turn's end."""
        builder = ReplyBuilder()
        if proc is None:
            try:
                proc = self._spawn(plan)
            except AgentCannotStart as exc:
                builder.finish()
                self._snapshot_taken()
                return self._end.finish(
                    plan, builder, sidecar, cancelled=False, problem=Problem(str(exc))
                )
        cancelled, problem = False, None
        self._proc, self._turn = proc, plan.turn
        try:
            cancelled, problem = self._pump(plan, proc, builder, sidecar)
        except RegionGone:
            log.info("%s: the streaming reply was deleted; cancelling the turn", self.path)
            proc.stop()
            proc.close(RESULT_GRACE)
            return self._end.end_cancelled(plan, builder.reply)
        except AgentdocError as exc:
            # A write failed (disk full, file made read-only, moved or deleted): the reply has
            # nowhere to go, so the turn ends as failed rather than streaming on unseen.
            proc.stop()
            proc.close(RESULT_GRACE)
            return self._end.end_write_failed(plan, builder, sidecar, exc)
        except BaseException:
            proc.stop()
            proc.close(RESULT_GRACE)
            raise
        end = proc.close(RESULT_GRACE)
        if end is not None:
            builder.feed(end)
        builder.finish()
        if self._said and builder.reply.session_id is not None:
            drop_reasons(self.path, self._said)  # the prompt went out with them
            self._said = 0
        return builder, cancelled, problem

    def _pump(
        self,
        plan: TurnPlan,
        proc: AgentTurn,
        builder: ReplyBuilder,
        sidecar: ThinkingSidecar,
    ) -> tuple[bool, Problem | None]:
        """Feed the agent's events into the builder, flushing to the document: whether it was
        cancelled, and why agentdoc stopped the agent if it did."""
        interval = self.settings.flush_interval
        last_flush = last_line = last_check = last_look = time.monotonic()
        dirty = False
        while True:
            event = self._next_event(proc, last_line)
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
            if self._approvals.waiting is not None:
                last_line = now  # waiting for the person is not a stall
                if self._answer(builder, now):
                    dirty, last_flush = True, 0.0
            if event is None:
                if now - max(last_flush, last_look) >= IDLE_CHECK and self._approvals.may_flush:
                    # Nothing new from the CLI, but the user may have deleted the block (a
                    # cancel) or saved a stale copy over it (put it back) meanwhile. Only a
                    # look: the batched reads return None between deltas, and new text here
                    # would be written every IDLE_CHECK, faster than a synced folder's pace.
                    # Timed apart from the writes, or each look would put the next one off.
                    self._writer.check()
                    last_look = now
                if now - last_line > self.settings.stall_timeout:
                    stalled = Problem(
                        f"no output from {plan.request.agent} for "
                        f"{self.settings.stall_timeout:.0f} s; "
                        "the turn was stopped (stall timeout)",
                        STALLED,
                    )
                    proc.stop()
                    self._drain(proc, builder)
                    return False, stalled
            elif self._feed(builder, event):
                last_line, dirty = now, True
                if builder.ended:
                    return (
                        False,
                        None,
                    )  # the agent's end of the turn, whatever still holds its output
            else:
                last_line = now
            if dirty and (now - last_flush >= interval or self._first_text(builder)):
                self._publish(plan, builder.reply, sidecar)
                last_flush, dirty = time.monotonic(), False
                interval = max(self.settings.flush_interval, WRITE_BACKOFF * (last_flush - now))

    def _next_event(self, proc: AgentTurn, last_line: float) -> Event | EndOfStream | None:
        """The agent's next event, or None after a wait; see STREAM_PACE."""
        event = proc.next_event(0)
        if event is not None or time.monotonic() - last_line > 2 * STREAM_PACE:
            return event if event is not None else proc.next_event(0.1)
        self.cancel.wait(STREAM_PACE)
        return proc.next_event(0)

    def _first_text(self, builder: ReplyBuilder) -> bool:
        """The reply's first text has arrived and is not in the document yet: it is written at
        once, so the person sees the reply start; later text is coalesced per flush interval."""
        if self._shown_text:
            return False
        # Only until the first text: the reply is rebuilt for this, which later events avoid.
        self._shown_text = bool(builder.reply.text())
        return self._shown_text

    def _feed(self, builder: ReplyBuilder, event: Event | EndOfStream) -> bool:
        """Take one event; True if it may change the reply."""
        if isinstance(event, EndOfStream | Activity):
            return False
        if isinstance(event, PermissionAsked):
            self._ask(builder, event)
        elif isinstance(event, PermissionWithdrawn):
            self._approvals.withdraw(event.request_id)
        else:
            builder.feed(event)
        return True

    # -- tool permission requests ------------------------------------------------------------

    def _ask(self, builder: ReplyBuilder, request: PermissionAsked) -> None:
        if self._approvals.ask(request, self._proc):
            return  # refused without asking
        # Written at once (not at the next flush), so the person sees it while we wait.
        self._writer.flush(self._body(builder.reply))
        reply = builder.reply
        self._end.progress(
            self._turn,
            "waiting",
            reply.output_chars,
            reply.session_id,
            request.tool_name,
            reply=reply,  # the tool's block, for whoever asks the person what it would do
        )

    def _answer(self, builder: ReplyBuilder, now: float) -> bool:
        """Pass on the answers found now; True if any. Then the turn streams again."""
        answered = self._approvals.pass_on(now, self._writer, self._proc)
        if answered and self._approvals.waiting is None:
            reply = builder.reply
            self._end.progress(self._turn, "streaming", reply.output_chars, reply.session_id)
        return answered

    def _body(self, reply: Reply, *, final: bool = False) -> str:
        return render_body(reply, final=final, approvals=self._approvals.shown)

    def _drain(self, proc: AgentTurn, builder: ReplyBuilder) -> None:
        while (event := proc.next_event(0)) is not None and event is not END:
            self._feed(builder, event)

    def _publish(self, plan: TurnPlan, reply: Reply, sidecar: ThinkingSidecar) -> None:
        # The journal gets the text at each write, not at each delta: it is synced only here,
        # so what a crash leaves of it is the same, at a fraction of the cost.
        self._journal.record(reply.text())
        self._journal.sync()
        if self._thinking_on:
            sidecar.update(reply.thinking, reply.session_id)
        self._writer.flush(self._body(reply))
        tool = self._approvals.waiting
        state = "waiting" if tool else "retrying" if reply.retry is not None else "streaming"
        # The live line says what is retried (the document shows it too, below the reply).
        detail = tool or (retry_words(reply.retry) if reply.retry is not None else "")
        self._end.progress(
            plan.turn, state, reply.output_chars, reply.session_id, detail, reply=reply
        )
