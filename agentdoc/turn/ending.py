"""How a turn ends: the reply's final form written, the hooks after it run, the status told.

`TurnRunner` streams a turn; the ways it can end — finished, failed, cancelled by the person,
its reply unwritable — all come here, so the rules of an ending (a prompt that got no reply stays
pending and runs no hook after it, a session that lost the turn is not resumed) live in one
place. `progress` is here too: every state a turn passes through is told the same way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agentdoc.agents import Failure, Reply, ReplyBuilder
from agentdoc.config import Settings
from agentdoc.document import (
    Document,
    DocumentError,
    FrontmatterError,
    ThinkingSidecar,
    parse,
    read_text,
    render_final,
    sidecar_link,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import Journal, StatusReporter
from agentdoc.turn.approvals import Approvals
from agentdoc.turn.hooks import TurnEnd, TurnHooks, resolved
from agentdoc.turn.outcome import Progress, TurnOutcome, final_state, session_lost, unanswered
from agentdoc.turn.session import TurnPlan
from agentdoc.turn.writer import RegionGone, ReplyWriter


@dataclass(frozen=True)
class Problem:
    """Why agentdoc itself ended the turn (a stall, an agent that could not start, a reply that
    could not be written): handed to the ending as a value, not left on the runner."""

    message: str
    failure: Failure | None = None  # its kind, when agentdoc knows it


@dataclass
class TurnEnding:
    """How one turn ends, and how each state it passes through is told. `TurnRunner` builds
    one per turn from the parts it shares with it (composition, not a base class)."""

    path: Path
    settings: Settings
    environ: Mapping[str, str] | None
    on_progress: Callable[[Progress], None]
    status: StatusReporter
    writer: ReplyWriter
    approvals: Approvals
    journal: Journal
    thinking_on: bool
    hooks: TurnHooks
    started: float = field(default_factory=time.monotonic)

    def finish(
        self,
        plan: TurnPlan,
        builder: ReplyBuilder,
        sidecar: ThinkingSidecar,
        *,
        cancelled: bool,
        problem: Problem | None = None,
    ) -> TurnOutcome:
        self.approvals.close()
        reply = builder.reply
        if problem is not None:
            reply = dataclasses.replace(reply, error=problem.message, failure=problem.failure)
        elif cancelled and reply.error is None:
            reply = dataclasses.replace(reply, interrupted=True)
        # No reply text at all: the prompt stays pending, so a failure never costs it.
        pending = unanswered(reply) and not self.approvals.shown
        body = self._final_body(plan, reply, sidecar, pending)
        # Only an id the CLI reported: one we chose for a CLI that never started names nothing.
        session_id = reply.session_id
        if session_lost(reply) or pending:
            # A retry of a prompt that got no reply must not resume a session holding it.
            session_id = None
        try:
            self.writer.close(body, session_id, next_prompt=not pending, agent=plan.request.agent)
        except RegionGone:
            return self.end_cancelled(plan, reply)
        except AgentdocError:
            # Still not writable: the region stays open for recovery to close (the daemon does
            # at the document's next change, `run` before its next turn); `run` records the
            # error in the status as the turn's failure.
            self._keep_journal(reply)
            raise
        state = final_state(reply, cancelled=cancelled)
        if not pending:
            self.hooks.after(self._end(plan, reply, session_id, sidecar, state))
        detail = reply.error or (
            "the reply was interrupted before it finished" if state == "interrupted" else ""
        )
        tokens = reply.usage.output_tokens if reply.usage is not None else None
        if not tokens and reply.output_chars:
            tokens = None  # an interrupted agent reports no count for the text it did send
        self.progress(plan.turn, state, reply.output_chars, session_id, detail, tokens, reply)
        return self._outcome(plan, reply, state, session_id)

    def _final_body(
        self, plan: TurnPlan, reply: Reply, sidecar: ThinkingSidecar, pending: bool
    ) -> str:
        """The reply as it stays in the document (its thinking kept in the sidecar)."""
        has_thinking = self.thinking_on and sidecar.update(reply.thinking, reply.session_id)
        return render_final(
            reply,
            elapsed=time.monotonic() - self.started,
            document_name=self.path.name,
            thinking_link=sidecar_link(self.path, plan.turn) if has_thinking else None,
            footer=self.settings.footer,
            note="; ".join(n for n in (plan.note, reply.session_note) if n) or None,
            pending=pending,
            approvals=self.approvals.shown,
            context_hint=self.settings.context_hint,
        )

    def _end(
        self,
        plan: TurnPlan,
        reply: Reply,
        session_id: str | None,
        sidecar: ThinkingSidecar,
        state: str,
    ) -> TurnEnd:
        """What the hooks after the turn see; the document as the turn's own last write left it,
        parsed once for them all (None: each says why it does without). Not read again: a
        save since may be an editor's buffer older than the reply, which shows no turn."""
        return TurnEnd(
            path=self.path,
            settings=self.settings,
            environ=resolved(self.environ),
            plan=plan,
            session=session_id,
            started=sidecar.started,
            reply=reply,
            complete=state == "done",
            final=_final_document(self.path, self.writer.last_written()),
        )

    def end_cancelled(self, plan: TurnPlan, reply: Reply) -> TurnOutcome:
        """The user deleted the streaming block: nothing to write, but the status must end."""
        self.progress(plan.turn, "cancelled", reply.output_chars, reply.session_id)
        return self._outcome(plan, reply, "cancelled")

    def end_not_started(self, plan: TurnPlan, exc: AgentdocError) -> TurnOutcome:
        """The agent could not start: told where its reply would be; the prompt stays pending."""
        self.writer.open()
        sidecar = ThinkingSidecar(self.path, plan.turn, datetime.now(UTC), self.writer.ledger)
        builder = ReplyBuilder()
        builder.finish()
        return self.finish(plan, builder, sidecar, cancelled=False, problem=Problem(str(exc)))

    def end_write_failed(
        self, plan: TurnPlan, builder: ReplyBuilder, sidecar: ThinkingSidecar, exc: Exception
    ) -> TurnOutcome:
        self._keep_journal(builder.reply)
        problem = Problem(f"the reply could not be written into the document: {exc}")
        builder.finish()
        return self.finish(plan, builder, sidecar, cancelled=False, problem=problem)

    def _keep_journal(self, reply: Reply) -> None:
        """Leave the journal, with the reply text so far, for whoever closes the region later."""
        self.journal.keep = True
        self.journal.record(reply.text())
        self.journal.sync()

    def _outcome(
        self, plan: TurnPlan, reply: Reply, state: str, session_id: str | None = None
    ) -> TurnOutcome:
        return TurnOutcome(
            path=self.path,
            turn=plan.turn,
            reply=reply,
            state=state,
            session_id=session_id or reply.session_id,
            elapsed=time.monotonic() - self.started,
            held=self.writer.held,
        )

    def progress(
        self,
        turn: int,
        state: str,
        chars: int,
        session_id: str | None,
        detail: str = "",
        tokens: int | None = None,
        reply: Reply | None = None,
    ) -> None:
        elapsed = time.monotonic() - self.started
        usage = reply.usage if reply is not None else None
        cost = usage.cost_usd if usage is not None and tokens is not None else None
        context = (usage.context_used, usage.context_size) if usage else (None, None)
        # The status file first: whoever is told (a terminal asking for an approval) may act
        # on it at once, and `agentdoc approve` checks that the request is waiting.
        self.status.report(turn, state, chars, session_id, detail, tokens, context, cost)
        self.on_progress(
            Progress(self.path, turn, state, elapsed, chars, session_id, detail, reply)
        )


def _final_document(path: Path, written: str | None) -> Document | None:
    try:
        return parse(read_text(path) if written is None else written)
    except (AgentdocError, DocumentError, FrontmatterError):
        return None
