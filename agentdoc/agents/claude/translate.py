"""Translate the CLI's stream-json events into the agent-neutral events, rolling back abandoned
attempts.

The CLI sends every content block twice when partial messages are on: as deltas (a preview)
and then whole in an ``assistant`` line (the commit), which becomes the block's ``BlockEnd``
with its final text. A streamed attempt that fails half-way is followed by a retry that repeats
the content, often as a non-streaming message with a new id and no deltas, so the failed
attempt must be taken back out (``Retract``). The rules, in the order of the CLI protocol notes:

1. Text/thinking deltas append to the open block of the open message.
2. An ``assistant`` line of the open message ends the open block, replacing its preview.
3. An ``assistant`` line of another message (or with no stream events at all) takes back every
   block not yet ended first, then shows its blocks whole.
4. A new attempt replaces a failed one as a whole: when a message starts, or an ``assistant``
   line with a new id arrives, while the open message never reached ``message_stop``, that
   message's blocks go, ended or not, because a message can fail after some of its blocks were
   committed and the retry repeats them. A retry notice only takes back unended blocks: if
   every retry fails, the committed blocks are the partial reply. Without
   ``--include-partial-messages`` there is no ``message_stop`` to tell, so committed blocks
   then always stay.
5. An ``assistant`` line with ``error`` is an error notice, never content; it takes back what
   is not ended.
6. ``result`` ends the turn and takes back what is not ended. An interrupted turn (SIGINT) has
   its partial block committed by the CLI before the ``result``; a turn with no ``result`` at
   all (SIGTERM, kill, a SIGINT whose exit won the race with the result) keeps its unended
   blocks, is marked interrupted, and costs what its streamed tokens come to (:meth:`no_result`).

One translator covers one turn: events after the turn's ``result`` are ignored.
"""

from __future__ import annotations

import logging
from typing import get_args

from agentdoc.agents.base import events as neutral
from agentdoc.agents.base.events import BlockKind, StopReason
from agentdoc.agents.claude.events import (
    ApiRetry,
    AssistantBlock,
    BlockDelta,
    BlockStart,
    ContentBlock,
    DeltaKind,
    Event,
    Init,
    Interrupted,
    MessageDelta,
    MessageStart,
    MessageStop,
    RedactedThinkingBlock,
    Result,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBatch,
    ToolUseBlock,
)
from agentdoc.agents.claude.failures import classify
from agentdoc.agents.claude.usage import (
    OUTPUT_WEIGHT,
    Prices,
    cost_share,
    estimate,
    model_name,
    only_this_turn,
    turn_cost,
)

logger = logging.getLogger(__name__)

SYNTHETIC_MODEL = "<synthetic>"
# Internal diagnostics the CLI attaches to an interrupted turn's result; not for people.
_DIAGNOSTIC_PREFIX = "[ede_diagnostic]"
_STDERR_LIMIT = 2000
_BLOCK_KINDS: frozenset[str] = frozenset(get_args(BlockKind))
# Stop reasons of the Messages API that name an outcome of their own.
_STOP_REASONS: dict[str, StopReason] = {"max_tokens": "max_tokens", "refusal": "refusal"}

Out = list[neutral.Event]


class Translator:
    """Feed it the CLI's events of one turn; each call returns the neutral events they mean."""

    def __init__(
        self, cost_before: float = 0.0, counted: bool = False, prices: Prices | None = None
    ) -> None:
        # The CLI reports the session's (or the warm process's) cost so far: this is the total
        # before the turn, which the turn's own cost is the difference from. ``counted``: the
        # process itself reported it (exact); else it is our record, and a fresh process may
        # have started from another figure (see `usage`). ``prices``: what results taught,
        # shared with the process's other turns.
        self.cost_before = cost_before
        self.counted = counted
        self.prices = Prices() if prices is None else prices
        self.reported_total: float | None = None  # the running total the result reported
        self._open_message: str | None = None  # the streamed message rule 4 may take back
        self._open_stopped = False
        self._open_index: int | None = None
        self._drafts: dict[int, BlockKind] = {}  # blocks shown but not ended
        self._announced: str | None = None  # the message the neutral stream is in
        self._fresh = 0  # indexes for whole blocks, below the CLI's own (which start at 0)
        self._stop_reason: StopReason | None = None
        self._interrupted = False
        # The last API call's whole prompt and its reply so far: what the context holds.
        self._prompt_tokens: int | None = None
        self._reply_tokens = 0
        # What the stream showed was paid for, should no result tell it: every API call's
        # prompt, the answers of the calls before the open one, the open one's text so far.
        self._model: str | None = None
        self._paid_in = 0
        self._paid_out = 0
        self._paid_weight = 0.0
        self._reply_chars = 0
        self.ended = False

    def feed(self, event: Event) -> Out:
        if self.ended:
            logger.debug("ignoring %s after the turn's result", event.type)
            return []
        if getattr(event, "parent_tool_use_id", None) is not None:
            return []  # a subagent's output is not part of the reply
        match event:
            case BlockDelta():
                return self._on_delta(event.index, event.kind, event.text)
            case AssistantBlock():
                return self._on_assistant(event)
            case BlockStart():
                return self._on_block_start(event)
            case MessageStart():
                return self._on_message_start(event)
            case MessageStop():
                self._open_stopped = True
                return [neutral.MessageStop()]
            case MessageDelta():
                self._stop_reason = _STOP_REASONS.get(event.stop_reason or "", self._stop_reason)
                self._reply_tokens = event.output_tokens or self._reply_tokens
                return []
            case ToolResult():
                return [_tool_update(event)]
            case ToolResultBatch():
                return [_tool_update(result) for result in event.results]
            case Init():
                return [neutral.SessionStarted(event.session_id, model_name(event.model))]
            case ApiRetry():
                return [*self._drop_drafts(), _retrying(event)]
            case Interrupted():
                self._interrupted = True
                return []
            case Result():
                return [*self._drop_drafts(), self._on_result(event)]
        return []

    def text_delta(self, index: int, kind: DeltaKind, text: str) -> Out:
        """What a main-reply ``BlockDelta`` of these fields means: :meth:`feed` without the
        event model, for the lines that make up most of a reply."""
        if self.ended:
            logger.debug("ignoring a delta after the turn's result")
            return []
        return self._on_delta(index, kind, text)

    def no_result(self, exit_code: int | None, stderr: str) -> neutral.TurnEnd:
        """The end of a turn whose process ended without a ``result``: interrupted, failed if
        its exit says so."""
        failure = exit_failure(exit_code, stderr)
        self.ended = True
        return neutral.TurnEnd(
            "error",
            model=self._model,
            usage=self._streamed_usage(),
            error=failure,
            interrupted=True,
            failure=classify(failure or ""),
        )

    # --- event handlers ------------------------------------------------------------------

    def _on_message_start(self, event: MessageStart) -> Out:
        out = self._abandon_open_message()
        self._open_message = event.message_id
        self._open_stopped = False
        self._open_index = None
        self._announced = event.message_id
        answered = self._answer_tokens()
        self._paid_out += answered
        self._paid_weight += OUTPUT_WEIGHT * answered + event.prompt_weight
        self._paid_in += event.input_tokens or 0
        self._model = model_name(event.model) or self._model
        self._prompt_tokens, self._reply_tokens, self._reply_chars = event.input_tokens, 0, 0
        out.append(neutral.MessageStart(event.message_id, model_name(event.model)))
        return out

    def _on_block_start(self, event: BlockStart) -> Out:
        self._open_index = event.index
        if event.block_type not in _BLOCK_KINDS:
            return []  # a tool call is shown once whole, from its commit
        kind: BlockKind = event.block_type  # type: ignore[assignment]
        self._drafts[event.index] = kind
        return [neutral.BlockStart(event.index, kind)]

    def _on_delta(self, index: int, kind: DeltaKind, text: str) -> Out:
        if kind != "text" and kind != "thinking":
            return []  # signatures and tool input JSON are only useful whole, from the commit
        self._open_index = index
        self._reply_chars += len(text)
        delta = neutral.BlockDelta(index, text)
        if index in self._drafts:
            return [delta]
        self._drafts[index] = kind
        return [neutral.BlockStart(index, kind), delta]

    def _on_assistant(self, event: AssistantBlock) -> Out:
        if event.error is not None:
            text = _blocks_text(event.blocks) or event.error
            return [*self._drop_drafts(), neutral.Notice(text, classify(text))]
        if event.model == SYNTHETIC_MODEL:
            logger.debug("skipping a synthetic assistant line without an error")
            return []
        out: Out = []
        draft: int | None = None
        if event.message_id == self._open_message:
            draft = self._open_index if self._open_index in self._drafts else None
        else:
            # Content with no deltas of its own: a non-streaming retry of a failed stream.
            out = self._abandon_open_message()
            if self._announced != event.message_id:
                self._announced = event.message_id
                out.append(neutral.MessageStart(event.message_id, model_name(event.model)))
        for block in event.blocks:
            draft = self._commit(block, draft, out)
        if draft is not None:
            out.append(neutral.BlockEnd(draft, ""))  # the commit did not repeat it: drop it
            self._drafts.pop(draft)
        return out

    def _commit(self, block: ContentBlock, draft: int | None, out: Out) -> int | None:
        """Show one committed block (ending the open draft if it is that block); the draft
        still open after it."""
        if isinstance(block, ToolUseBlock):
            out.append(neutral.ToolCall(block.id, block.name, dict(block.input)))
            return draft
        shown = _shown(block)
        if shown is None:
            logger.debug("not showing a %s block", block.type)
            return draft
        kind, text = shown
        if draft is not None and self._drafts[draft] == kind:
            out.append(neutral.BlockEnd(draft, text))
            self._drafts.pop(draft)
            return None
        self._fresh -= 1
        out += [neutral.BlockStart(self._fresh, kind), neutral.BlockEnd(self._fresh, text)]
        return draft

    def _on_result(self, event: Result) -> neutral.TurnEnd:
        self.ended = True
        self.prices.learn(event.prices)
        interrupted = self._interrupted or event.terminal_reason == "aborted_streaming"
        error = result_failure(event, interrupted=interrupted) if event.is_error else None
        stop: StopReason = self._stop_reason or "end_turn"
        if error is not None:
            stop = "error"
        elif interrupted:
            stop = "cancelled"
        turn_tokens = event.input_tokens + event.output_tokens
        own, total = turn_cost(
            event.total_cost_usd, self.cost_before, only_this_turn(turn_tokens, event.model_tokens)
        )
        if not self.counted and (share := cost_share(event.own_weight, event.model_costs)):
            own = share
        self.reported_total = total
        usage = neutral.Usage(
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cost_usd=own,
            session_cost_usd=total or None,
            # The turn's own figures add up every API call; the context after it is the last
            # call's prompt plus its answer.
            context_used=self._prompt_tokens + self._reply_tokens if self._prompt_tokens else None,
            context_size=event.context_window,
        )
        return neutral.TurnEnd(
            stop,
            session_id=event.session_id,
            model=model_name(next(iter(event.models), None)),
            usage=usage,
            error=error,
            interrupted=interrupted,
            duration_ms=event.duration_ms,
            failure=None if error is None else classify(error),
        )

    # --- helpers -------------------------------------------------------------------------

    def _answer_tokens(self) -> int:
        """The open call's answer so far: as the API counted it, or its streamed text at about
        four characters a token when the stream was cut before the count came."""
        return max(self._reply_tokens, self._reply_chars // 4)

    def _streamed_usage(self) -> neutral.Usage | None:
        """A turn without a result: the tokens its stream showed, and their estimated cost."""
        answered = self._answer_tokens()
        if not self._paid_in and not answered:
            return None
        weight = self._paid_weight + OUTPUT_WEIGHT * answered
        cost = estimate(weight, self.prices.of(self._model))
        return neutral.Usage(
            input_tokens=self._paid_in,
            output_tokens=self._paid_out + answered,
            cost_usd=cost,
            cost_estimated=cost is not None,
            context_used=self._prompt_tokens + answered if self._prompt_tokens else None,
        )

    def _drop_drafts(self) -> Out:
        if not self._drafts:
            return []
        self._drafts.clear()
        return [neutral.Retract(None)]

    def _abandon_open_message(self) -> Out:
        """Take back the open message's blocks if it never finished: that attempt failed."""
        out = self._drop_drafts()
        failed = self._open_message
        if failed is None or self._open_stopped:
            return out
        self._open_message = None
        logger.debug("rolled back the unfinished message %s", failed)
        out.append(neutral.Retract(failed))
        return out


# --- pure decisions ------------------------------------------------------------------------


def _shown(block: ContentBlock) -> tuple[BlockKind, str] | None:
    match block:
        case TextBlock():
            return "text", block.text
        case ThinkingBlock():
            return "thinking", block.thinking
        case RedactedThinkingBlock():
            return "redacted_thinking", ""
    return None


def _tool_update(event: ToolResult) -> neutral.ToolUpdate:
    return neutral.ToolUpdate(event.tool_use_id, result=event.content, is_error=event.is_error)


def _retrying(event: ApiRetry) -> neutral.Retrying:
    return neutral.Retrying(
        attempt=event.attempt,
        max_retries=event.max_retries,
        delay_ms=event.retry_delay_ms,
        error_status=event.error_status,
        error=event.error,
    )


def _blocks_text(blocks: list[ContentBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextBlock)).strip()


def result_failure(result: Result, *, interrupted: bool) -> str | None:
    """The human text of an ``is_error`` result; None for a plain interruption."""
    if result.result:
        return result.result
    errors = [e for e in result.errors if not e.startswith(_DIAGNOSTIC_PREFIX)]
    if errors:
        return "\n".join(errors)
    return None if interrupted else f"Claude Code reported {result.subtype}"


def exit_failure(exit_code: int | None, stderr: str) -> str | None:
    """Why a run that printed no ``result`` failed, or None if it was merely stopped.

    Exit 0 (a racy SIGINT) and deaths by signal (negative codes, or 128+N as the CLI exits 143
    on SIGTERM) are interruptions, not failures.
    """
    if exit_code is None or exit_code == 0 or exit_code < 0 or exit_code > 128:
        return None
    message = stderr.strip()[-_STDERR_LIMIT:]
    return message or f"claude exited with code {exit_code} without a result"
