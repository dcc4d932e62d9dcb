"""One conversation turn, end to end: prompt → agent → streamed reply → document.

`TurnRunner` finds the prompt, plans the request, asks the gate's leave, runs the hooks before
the turn (`agentdoc.turn.hooks`), starts the agent and hands its events to
:class:`~agentdoc.turn.stream.ReplyStream`, which writes the reply region through
:class:`~agentdoc.turn.writer.ReplyWriter`. The turn ends when the agent's output ends, when it
is cancelled (a `cancel` event, or the user deleting the streaming block), or when the stream
is silent for longer than `stall_timeout`; what is written then, and the hooks after the turn,
are :class:`~agentdoc.turn.ending.TurnEnding`'s part.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from agentdoc.agents import AgentRequest, AgentTurn, Clearance, ReplyBuilder, start_turn
from agentdoc.config import Settings
from agentdoc.document import (
    Document,
    ThinkingSidecar,
    WriteLedger,
    check_replaceable,
    render_refusal,
)
from agentdoc.errors import AgentCannotStart, AgentdocError, NoPendingPrompt, PromptRefused
from agentdoc.records import Journal, StatusReporter, marked, take_cancel_request
from agentdoc.records import carried as carried_reasons
from agentdoc.records import drop as drop_reasons
from agentdoc.turn import detect, presets
from agentdoc.turn.approvals import Approvals
from agentdoc.turn.ending import Problem, TurnEnding
from agentdoc.turn.hooks import DEFAULT_HOOKS, ToolGate, TurnHook, TurnHooks, TurnStart
from agentdoc.turn.outcome import Progress, TurnOutcome, session_lost
from agentdoc.turn.session import Mode, TurnPlan, prepare_turn
from agentdoc.turn.stream import ReplyStream
from agentdoc.turn.whose import check_agent
from agentdoc.turn.writer import RegionGone, ReplyWriter, load

log = logging.getLogger(__name__)

# After its `result` line the CLI only saves its session and exits; a CLI (or a wrapper script's
# leftover child) still running this long after that is stopped, the reply is complete.
RESULT_GRACE = 5.0

# Starts the agent for a turn: a fresh process (`start_turn`), or a warm process's next turn.
Launcher = Callable[[AgentRequest, Settings, Mapping[str, str] | None], AgentTurn]
# The gate's leave to start the document's agent in a working folder, for the document as
# parsed (its `git: sync`); AgentdocError when refused. Without it no agent process starts.
Clearer = Callable[[Path, Document], Clearance]


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
        hooks: Iterable[type[TurnHook]] = DEFAULT_HOOKS,
    ) -> None:
        """`notice_start_failure`: a CLI that cannot start is told in the document, as a failure
        notice that keeps the prompt pending (the daemon, whose terminal nobody may watch),
        instead of raised with the file untouched (`agentdoc run`, which prints it).
        `parsed`: the version the caller already parsed, not parsed again if still current.
        `hooks`: what runs around the turn (`agentdoc.turn.hooks`), one of each made for it."""
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
        self._said = 0  # kept answers the running turn's prompt carries (records/reasons.py)
        self._ending: TurnEnding | None = None  # built when the turn starts
        self._stream: ReplyStream | None = None  # likewise
        self._hooks = TurnHooks(path, hooks)
        # Set when the hooks that hold the agent's tools (the undo snapshot) let go.
        self._tools_after = ToolGate()

    @property
    def _end(self) -> TurnEnding:
        assert self._ending is not None, "the turn has not started"
        return self._ending

    @property
    def _streaming(self) -> ReplyStream:
        assert self._stream is not None, "the turn has not started"
        return self._stream

    def note_queued(self) -> None:
        """A prompt was saved below this reply; it is sent when the turn ends (the status says
        so meanwhile). Safe to call from another thread."""
        self._status.note_queued()

    # -- the turn ---------------------------------------------------------------------------

    def run(self) -> TurnOutcome:
        doc, prompt = self._submitted()
        plan = self._plan(doc, prompt)
        try:
            return self._run(plan, doc)
        except AgentdocError as exc:
            # One-shot runs have no daemon to record this: the status must not say streaming.
            self._status.report(plan.turn, "failed", 0, None, str(exc))
            raise
        finally:
            self._tools_after.asked.set()  # a turn that never asked its agent
            self._hooks.settle()
            self._tools_after.set()  # a hook never started holds nothing back
            self._journal.close()

    def _submitted(self) -> tuple[Document, str]:
        """The document as it is now, and the prompt it submits (NoPendingPrompt: none)."""
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
        return doc, sub.prompt

    def _plan(self, doc: Document, prompt: str) -> TurnPlan:
        """Where the turn goes and what it sends; the parts the turn shares are built for it.
        A prompt refused (a preset, an include) is told where the reply would be."""
        try:
            doc, include = presets.apply_preset(doc)
        except PromptRefused as exc:
            self._refuse(doc.turn_count() + 1, exc)
            raise
        agent = check_agent(self.path, doc, self.settings)
        self._writer.prompt = prompt
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
        self._parts(plan)
        return plan

    def _parts(self, plan: TurnPlan) -> None:
        """The journal, the ending and the stream of this turn, sharing the runner's parts."""
        self._journal = Journal(
            self.path,
            self._writer.nonce,
            plan.request.prompt,
            plan.request.resume or plan.request.session_id,
        )
        shared = (self.path, self.settings)
        self._ending = TurnEnding(
            *shared,
            self.environ,
            self.on_progress,
            self._status,
            self._writer,
            self._approvals,
            self._journal,
            self._thinking_on,
            self._hooks,
        )
        self._stream = ReplyStream(
            *shared,
            self.cancel,
            self._writer,
            self._approvals,
            self._journal,
            self._ending,
            self._thinking_on,
        )

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
        # The hooks before the turn (the undo snapshot of what the agent may change, as it is
        # before it can). Only the prompt is on the way from the save to the request: a hook's
        # work runs beside it, and `tools_after` (set when the hooks holding the tools let go)
        # keeps every tool of the turn from running before. The agent holds its tools until
        # then where it can (an agent that calls a hook before each tool, whatever its
        # permission mode, and waits for the answer); where it cannot (an agent with no such
        # hook, a one-shot CLI's stdin) the prompt itself waits.
        self._hooks.before(
            TurnStart(self.path, self.settings, self.environ, plan, self._tools_after)
        )
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
        self._hooks.settle()
        return self._end.finish(plan, builder, sidecar, cancelled=cancelled, problem=problem)

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
                self._hooks.settle()
                return self._end.finish(
                    plan, builder, sidecar, cancelled=False, problem=Problem(str(exc))
                )
        cancelled, problem = False, None
        try:
            cancelled, problem = self._streaming.pump(plan, proc, builder, sidecar)
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
