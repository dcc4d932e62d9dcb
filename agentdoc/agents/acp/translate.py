"""ACP session updates → the agent-neutral events of a turn. Pure: no process, no clock.

:class:`UpdateTranslator` keeps the little state the event contract needs (the message and
block open now, the tool calls seen) and applies the agent's quirks row. Chunks are deltas in
ACP too, so each one becomes one ``BlockDelta``; a new ``messageId`` starts a new message.
"""

from __future__ import annotations

import logging
from typing import Any, get_args

from pydantic import ValidationError

from agentdoc.agents.acp.quirks import (
    NONE,
    Quirks,
    clean_thought,
    is_noise,
    retry_notice,
    says_failed,
    thought_joint,
)
from agentdoc.agents.acp.schema import (
    ContentChunk,
    NoticeUpdate,
    PermissionRequest,
    PromptResult,
    TokenUsage,
    ToolCallFields,
    UsageUpdate,
    error_detail,
)
from agentdoc.agents.acp.tools import tool_input, tool_name, tool_result
from agentdoc.agents.base.events import (
    Activity,
    BlockDelta,
    BlockEnd,
    BlockKind,
    BlockStart,
    Event,
    MessageStart,
    MessageStop,
    Notice,
    PermissionAsked,
    PermissionOption,
    Retract,
    Retrying,
    StopReason,
    ToolCall,
    ToolUpdate,
    TurnEnd,
    Usage,
)
from agentdoc.agents.base.failure import classify_with

log = logging.getLogger(__name__)

STOP_REASONS: frozenset[str] = frozenset(get_args(StopReason))
FINAL_STATUSES = ("completed", "failed")
ACTIVITY = Activity()  # the agent is working, though nothing shows


class UpdateTranslator:
    """The events of one turn, fed one ``session/update`` (or the prompt's answer) at a time."""

    def __init__(
        self,
        quirks: Quirks = NONE,
        session_id: str | None = None,
        model: str | None = None,
        name: str = "the agent",
        cost_before: float | None = None,
    ) -> None:
        self.quirks = quirks
        self.name = name
        self.cost_before = cost_before  # what the session had cost before this turn, if known
        # The agent said the turn failed (its quirks row); the text it sends now is the error.
        self.failure: list[str] | None = None
        self._message_text: list[str] = []  # the reply text of the message open now
        self._thought = ""  # the thinking block open now
        self.session_id = session_id
        self.model = model  # the session's model, unless the prompt's answer names another
        self.gauge: UsageUpdate | None = None
        self.shown_text = False  # reply text reached the turn (a failure keeps it, not the prompt)
        self._thought_shown = False  # and thinking, which is not a reply but is not nothing
        self._in_message = False
        self._message_id: str | None = None
        self._block: tuple[int, BlockKind] | None = None
        self._next_index = 0
        self._tools: dict[str, str] = {}  # the tool calls seen, with their names
        self._retries = 0  # failed API requests the agent said it retries
        self._retry_unanswered = False  # a retry notice came, and no reply text since

    def update(self, update: dict[str, Any]) -> list[Event]:
        """The events of one ``session/update``'s ``update``; [] for kinds a turn ignores."""
        kind = update.get("sessionUpdate")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return [ACTIVITY]  # plans, modes, commands…: not part of the reply, but not a stall
        try:
            return handler(self, update) or [ACTIVITY]
        except ValidationError as exc:
            log.info("ignoring a malformed %s update: %s", kind, exc.errors()[:1])
            return [ACTIVITY]

    # -- chunks -----------------------------------------------------------------------------

    def _message_chunk(self, update: dict[str, Any]) -> list[Event]:
        text, message_id = chunk_text(update)
        if not text or is_noise(text, self.quirks):
            return []
        if (retrying := retry_notice(text, self.quirks)) is not None:
            self._retry_unanswered = True
            return self.retrying("") if retrying else []
        if self.failure is not None:
            self.failure.append(text)
            return []
        events = self._enter_message(message_id) + self._enter_block("text")
        self.shown_text = True
        self._retry_unanswered = False
        self._message_text.append(text)
        return [*events, BlockDelta(self._index(), text)]

    def _thought_chunk(self, update: dict[str, Any]) -> list[Event]:
        text, message_id = chunk_text(update)
        text = clean_thought(text or "", self.quirks)
        if self._block is None or self._block[1] != "thinking":
            text = text.lstrip()  # a thought opening with blank lines (codex: "\n\n")
            self._thought = ""
        if not text:
            return []
        text = thought_joint(self._thought, text, self.quirks) + text
        self._thought += text
        self._thought_shown = True
        events = self._enter_message(message_id) + self._enter_block("thinking")
        return [*events, BlockDelta(self._index(), text)]

    def _enter_message(self, message_id: str | None) -> list[Event]:
        if self._in_message and (message_id is None or message_id == self._message_id):
            return []
        events = self._leave_message()
        self._in_message, self._message_id = True, message_id
        self._next_index = 0
        self._message_text = []
        return [*events, MessageStart(message_id=message_id)]

    def _leave_message(self) -> list[Event]:
        if not self._in_message:
            return []
        events = self._leave_block()
        self._in_message = False
        return [*events, MessageStop()]

    def _enter_block(self, kind: BlockKind) -> list[Event]:
        if self._block is not None and self._block[1] == kind:
            return []
        events = self._leave_block()
        self._block = (self._next_index, kind)
        self._next_index += 1
        return [*events, BlockStart(self._block[0], kind)]

    def _leave_block(self) -> list[Event]:
        if self._block is None:
            return []
        index, self._block = self._block[0], None
        return [BlockEnd(index)]

    def _index(self) -> int:
        assert self._block is not None
        return self._block[0]

    # -- tool calls -------------------------------------------------------------------------

    def _tool_call(self, update: dict[str, Any]) -> list[Event]:
        fields = ToolCallFields.model_validate(update)
        if fields.tool_call_id in self._tools:
            return self._tool_update(update)  # some agents repeat tool_call to update it
        name = self._tools[fields.tool_call_id] = tool_name(fields)
        events = self._enter_message(self._message_id) + self._leave_block()
        call = ToolCall(
            tool_id=fields.tool_call_id,
            name=name,
            input=tool_input(fields),
            title=fields.title,
        )
        return [*events, call, *self._progress(fields, with_input=False)]

    def _tool_update(self, update: dict[str, Any]) -> list[Event]:
        fields = ToolCallFields.model_validate(update)
        if fields.tool_call_id not in self._tools:
            return self._tool_call(update)  # an update is the first we hear of this call
        return self._progress(fields, with_input=True)

    def _progress(self, fields: ToolCallFields, *, with_input: bool) -> list[Event]:
        new_input = tool_input(fields) if with_input and fields.raw_input is not None else None
        if fields.status not in FINAL_STATUSES:
            return [ToolUpdate(fields.tool_call_id, input=new_input)] if new_input else []
        failed = fields.status == "failed"
        result = tool_result(fields)
        return [ToolUpdate(fields.tool_call_id, result=result, is_error=failed, input=new_input)]

    # -- the rest ---------------------------------------------------------------------------

    def _usage(self, update: dict[str, Any]) -> list[Event]:
        self.gauge = UsageUpdate.model_validate(update)
        return []

    def _info(self, update: dict[str, Any]) -> list[Event]:
        if says_failed(update, self.quirks) and self.failure is None:
            self.failure = []
        return []

    def _notice(self, update: dict[str, Any]) -> list[Event]:
        notice = NoticeUpdate.model_validate(update)
        # A notice ends up as the reply's error: only an error is one.
        if notice.severity != "error":
            return []
        return [Notice(notice.title, classify_with(notice.title))]

    def retrying(self, error: str) -> list[Event]:
        """A failed API request the agent will try again (how often and when, it does not say)."""
        self._retries += 1
        return [Retrying(self._retries, error=error.strip() or None)]

    def permission(self, request_id: str, request: PermissionRequest) -> PermissionAsked:
        fields = request.tool_call
        options = tuple(PermissionOption(o.option_id, o.name, o.kind) for o in request.options)
        # The tool's own name when its call was announced; its title says what it will do.
        name = self._tools.get(fields.tool_call_id) or tool_name(fields)
        return PermissionAsked(
            request_id=request_id,
            tool_name=name,
            input=tool_input(fields),
            description=fields.title,
            tool_id=fields.tool_call_id,
            options=options,
        )

    def finish(self, result: PromptResult) -> list[Event]:
        """The prompt's answer: close what is open, then the turn's end."""
        if self.failure is not None and result.stop_reason != "cancelled":
            said = error_detail("".join(self.failure))
            return self.fail(f"{self.name} failed: {said or 'its API request failed'}")
        stop = result.stop_reason
        if stop == "end_turn" and (why := self._failed_quietly()):
            return self.fail(f"{self.name} failed: {why}")
        if stop not in STOP_REASONS or stop == "error":
            log.info("unknown stop reason %r taken as end_turn", stop)
            stop = "end_turn"
        end = TurnEnd(
            stop_reason=stop,  # type: ignore[arg-type]  # checked against StopReason above
            session_id=self.session_id,
            model=meta_model(result.meta) or self.model,
            usage=turn_usage(result, self.gauge, self.cost_before),
            interrupted=stop == "cancelled",
            partial_kept=stop == "cancelled" and self.quirks.keeps_interrupted,
        )
        return [*self._leave_message(), end]

    def _failed_quietly(self) -> str | None:
        """Why a turn the agent ended `end_turn` failed (its quirks row says how it tells)."""
        if self._retry_unanswered:
            return f"its API request failed after {self._retries + 1} tries (its log may say why)"
        if self.shown_text or self._tools:
            return None
        if self.quirks.silent_failure:
            return "it ended the turn without a reply: its API request failed (its log may say why)"
        if not self._thought_shown:
            # Nothing at all: no agent answers a prompt so unless something went wrong (an API
            # error it kept to itself), and an empty reply taken as done would drop the prompt.
            return "it ended the turn without a word (its log may say why)"
        return None

    def fail(self, error: str, *, interrupted: bool = False) -> list[Event]:
        """The turn cannot complete (an error answer, the process gone). Reply text that only
        repeats the error (the Claude adapter streams "API Error: …" first) is taken back."""
        echoed = "".join(self._message_text).strip()
        retract = [Retract(self._message_id)] if echoed and echoed in error else []
        end = TurnEnd(
            "error",
            session_id=self.session_id,
            model=self.model,
            usage=turn_usage(None, self.gauge, self.cost_before),
            error=error,
            interrupted=interrupted,
            failure=classify_with(error),
        )
        return [*retract, *self._leave_message(), end]

    def cancelled(self) -> list[Event]:
        """A cancelled turn whose process had to be stopped: it never answered the prompt."""
        end = TurnEnd(
            "cancelled",
            session_id=self.session_id,
            usage=turn_usage(None, self.gauge, self.cost_before),
            interrupted=True,
        )
        return [*self._leave_message(), end]


_HANDLERS = {
    "agent_message_chunk": UpdateTranslator._message_chunk,
    "agent_thought_chunk": UpdateTranslator._thought_chunk,
    "tool_call": UpdateTranslator._tool_call,
    "tool_call_update": UpdateTranslator._tool_update,
    "usage_update": UpdateTranslator._usage,
    "notice": UpdateTranslator._notice,
    "session_info_update": UpdateTranslator._info,
}


def chunk_text(update: dict[str, Any]) -> tuple[str | None, str | None]:
    """The text (None: not a text block) and message id of a message or thought chunk.

    One arrives per streamed chunk, so the plain shape is read without building the model; any
    other shape goes through :class:`ContentChunk`, which reads the plain one the same way.
    """
    content, message_id = update.get("content"), update.get("messageId")
    if type(content) is dict and "message_id" not in update:
        kind, text = content.get("type"), content.get("text")
        plain = type(kind) is str and (text is None or type(text) is str)
        if plain and (message_id is None or type(message_id) is str):
            return (text if kind == "text" else None), message_id
    chunk = ContentChunk.model_validate(update)
    return (chunk.content.text if chunk.content.type == "text" else None), chunk.message_id


def turn_usage(
    result: PromptResult | None, gauge: UsageUpdate | None, cost_before: float | None = None
) -> Usage | None:
    """One ``Usage`` from the forms agents report it in: the prompt result's ``usage``,
    Gemini's ``_meta.quota.token_count``, the ``usage_update`` context gauge and its cost."""
    tokens = result.usage if result else None
    if tokens is None and result is not None:
        tokens = _quota_tokens(result.meta)
    if tokens is None and gauge is None:
        return None
    total = gauge.cost.amount if gauge and gauge.cost and gauge.cost.currency == "USD" else None
    return Usage(
        input_tokens=tokens.input_tokens if tokens else None,
        output_tokens=tokens.output_tokens if tokens else None,
        cost_usd=own_cost(total, cost_before),
        context_used=gauge.used if gauge else None,
        context_size=gauge.size if gauge else None,
        session_cost_usd=total,
    )


def own_cost(total: float | None, before: float | None) -> float | None:
    """A turn's own cost from the session's running cost after it (ACP's gauge counts the
    whole session, OpenCode's across processes too) and before it. A total below what came
    before is a count that started afresh (a new process that counts only its own work)."""
    if total is None:
        return None
    return total - before if before is not None and total >= before else total


def _quota(meta: dict[str, Any] | None) -> dict[str, Any]:
    quota = meta.get("quota") if meta else None
    return quota if isinstance(quota, dict) else {}


def _quota_tokens(meta: dict[str, Any] | None) -> TokenUsage | None:
    count = _quota(meta).get("token_count")
    if not isinstance(count, dict):
        return None
    inputs, outputs = count.get("input_tokens"), count.get("output_tokens")
    return TokenUsage(
        input_tokens=inputs if isinstance(inputs, int) else None,
        output_tokens=outputs if isinstance(outputs, int) else None,
    )


def meta_model(meta: dict[str, Any] | None) -> str | None:
    """The model Gemini says it used (``_meta.quota.model_usage``); the last one named."""
    usage = _quota(meta).get("model_usage")
    names = (
        [u.get("model") for u in usage if isinstance(u, dict)] if isinstance(usage, list) else []
    )
    models = [n for n in names if isinstance(n, str) and n]
    return models[-1] if models else None
