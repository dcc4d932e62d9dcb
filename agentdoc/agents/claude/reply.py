"""Accumulate one turn's stream events into the reply to show, rolling back abandoned attempts.

The CLI sends every content block twice when partial messages are on: as deltas (a preview)
and then whole in an ``assistant`` line (the commit). Deltas are kept as *tentative* parts; the
``assistant`` line replaces them. A streamed attempt that fails half-way is followed by a retry
that repeats the content, often as a non-streaming message with a new id and no deltas, so the
failed attempt must be taken back out. The rules, in the order of the CLI protocol notes:

1. Text/thinking deltas append to a tentative part for the open block of the open message.
2. An ``assistant`` line of the open message commits the open block, replacing its preview.
3. An ``assistant`` line of another message (or with no stream events at all) discards every
   tentative part first, then commits.
4. A new attempt replaces a failed one as a whole: when a message starts, or an ``assistant``
   line with a new id arrives, while the open message never reached ``message_stop``, that
   message's tentative *and* committed blocks go, because a message can fail after some of
   its blocks were committed and the retry repeats them. A retry notice only drops the
   tentative parts: if every retry fails, the committed blocks are the partial reply.
   Without ``--include-partial-messages`` there is no ``message_stop`` to tell, so committed
   blocks then always stay.
5. An ``assistant`` line with ``error`` is an error notice, never content; it drops what is
   tentative.
6. ``result`` ends the turn and drops what is still tentative. An interrupted turn (SIGINT) has
   its partial block committed by the CLI before the ``result``; a turn with no ``result`` at
   all (SIGTERM, kill) keeps its tentative parts and is marked interrupted.

One builder covers one turn: events after the turn's ``result`` are ignored.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from agentdoc.agents.claude.events import (
    ApiRetry,
    AssistantBlock,
    BlockDelta,
    BlockStart,
    ContentBlock,
    Event,
    Init,
    Interrupted,
    MessageStart,
    MessageStop,
    OtherBlock,
    RedactedThinkingBlock,
    Result,
    TextBlock,
    ThinkingBlock,
    ToolResult,
    ToolResultBatch,
    ToolUseBlock,
)
from agentdoc.agents.claude.usage import model_name

logger = logging.getLogger(__name__)

SYNTHETIC_MODEL = "<synthetic>"
# Internal diagnostics the CLI attaches to an interrupted turn's result; not for people.
_DIAGNOSTIC_PREFIX = "[ede_diagnostic]"
_STDERR_LIMIT = 2000


@dataclass(frozen=True)
class TextPart:
    text: str
    committed: bool


@dataclass(frozen=True)
class ToolPart:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False


Part = TextPart | ToolPart


@dataclass(frozen=True)
class ThinkingPart:
    """Thinking text; a redacted block has ``redacted=True`` and empty ``text``."""

    text: str
    redacted: bool
    committed: bool


@dataclass(frozen=True)
class Reply:
    """A snapshot of the turn. ``parts`` is always exactly what to show, in document order.

    ``committed`` tells whether the CLI has confirmed a part; after a turn without a ``result``
    the unconfirmed parts stay, as the partial reply of an interrupted turn.
    """

    parts: tuple[Part, ...] = ()
    thinking: tuple[ThinkingPart, ...] = ()
    session_id: str | None = None
    model: str | None = None
    retry: ApiRetry | None = None
    result: Result | None = None
    error: str | None = None
    interrupted: bool = False
    finished: bool = False
    output_chars: int = 0

    def text(self) -> str:
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    @property
    def done(self) -> bool:
        return self.result is not None or self.finished


DraftKind = Literal["text", "thinking", "redacted"]


@dataclass
class _Draft:
    """The tentative content of one streamed block."""

    kind: DraftKind
    chunks: list[str] = field(default_factory=list)

    def text(self) -> str:
        # Collapse as we go so repeated snapshots of a long block stay linear per snapshot.
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


@dataclass(frozen=True)
class _Entry:
    """A committed part and the message it came from (None without stream events)."""

    message_id: str | None
    part: Part | ThinkingPart


_DRAFT_KINDS: dict[str, DraftKind] = {
    "text": "text",
    "thinking": "thinking",
    "redacted_thinking": "redacted",
}


class ReplyBuilder:
    """Feed it every event of one turn, then :meth:`finish`; read :attr:`reply` at any time."""

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._drafts: dict[int, _Draft] = {}
        self._open_message: str | None = None
        self._open_stopped = False
        self._open_index: int | None = None
        self._session_id: str | None = None
        self._model: str | None = None
        self._retry: ApiRetry | None = None
        self._result: Result | None = None
        self._error: str | None = None
        self._interrupted = False
        self._finished = False

    # --- input ---------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        if self._result is not None:
            logger.debug("ignoring %s after the turn's result", event.type)
            return
        if getattr(event, "parent_tool_use_id", None) is not None:
            return  # a subagent's output is not part of the reply
        match event:
            case Init():
                self._session_id = self._session_id or event.session_id
                self._model = self._model or model_name(event.model)
            case ApiRetry():
                self._drafts.clear()
                self._retry = event
            case MessageStart():
                self._on_message_start(event)
            case BlockStart():
                self._on_block_start(event)
            case BlockDelta():
                self._on_delta(event)
            case MessageStop():
                self._open_stopped = True
            case AssistantBlock():
                self._on_assistant(event)
            case ToolResult():
                self._fill_tool_result(event)
            case ToolResultBatch():
                for result in event.results:
                    self._fill_tool_result(result)
            case Interrupted():
                self._interrupted = True
            case Result():
                self._on_result(event)

    @property
    def has_result(self) -> bool:
        """The CLI sent its ``result`` line: its last word on the turn."""
        return self._result is not None

    def finish(self, *, exit_code: int | None = None, stderr: str = "") -> None:
        """The process ended. Without a ``result`` the turn counts as interrupted."""
        if self._finished:
            return
        self._finished = True
        if self._result is not None:
            return
        self._interrupted = True
        self._error = self._error or exit_failure(exit_code, stderr)

    # --- output --------------------------------------------------------------------------

    @property
    def reply(self) -> Reply:
        parts = [e.part for e in self._entries if isinstance(e.part, TextPart | ToolPart)]
        thinking = [e.part for e in self._entries if isinstance(e.part, ThinkingPart)]
        for draft in self._drafts.values():
            text = draft.text()
            if draft.kind == "text" and text:
                parts.append(TextPart(text, committed=False))
            elif draft.kind == "redacted" or (draft.kind == "thinking" and text):
                thinking.append(ThinkingPart(text, draft.kind == "redacted", committed=False))
        return Reply(
            parts=tuple(parts),
            thinking=tuple(thinking),
            session_id=self._session_id,
            model=self._model,
            retry=self._retry,
            result=self._result,
            error=self._error,
            interrupted=self._interrupted,
            finished=self._finished,
            output_chars=_output_chars(parts, thinking),
        )

    # --- event handlers ------------------------------------------------------------------

    def _on_message_start(self, event: MessageStart) -> None:
        self._abandon_open_message()
        self._open_message = event.message_id
        self._open_stopped = False
        self._open_index = None
        self._retry = None
        self._model = self._model or model_name(event.model)

    def _on_block_start(self, event: BlockStart) -> None:
        self._open_index = event.index
        kind = _DRAFT_KINDS.get(event.block_type)
        if kind is not None:
            self._drafts[event.index] = _Draft(kind)

    def _on_delta(self, event: BlockDelta) -> None:
        if event.kind not in ("text", "thinking"):
            return  # signatures and tool input JSON are only useful whole, from the commit
        self._open_index = event.index
        draft = self._drafts.setdefault(event.index, _Draft(event.kind))
        draft.chunks.append(event.text)
        self._retry = None

    def _on_assistant(self, event: AssistantBlock) -> None:
        if event.error is not None:
            self._drafts.clear()
            self._error = _blocks_text(event.blocks) or event.error
            return
        if event.model == SYNTHETIC_MODEL:
            logger.debug("skipping a synthetic assistant line without an error")
            return
        if event.message_id == self._open_message:
            if self._open_index is not None:
                self._drafts.pop(self._open_index, None)
        else:
            # Content with no deltas of its own: a non-streaming retry of a failed stream.
            self._abandon_open_message()
        for block in event.blocks:
            self._commit(event.message_id, block)
        self._retry = None
        self._model = self._model or model_name(event.model)

    def _on_result(self, event: Result) -> None:
        self._drafts.clear()
        self._result = event
        self._retry = None
        self._session_id = self._session_id or event.session_id
        self._model = self._model or model_name(next(iter(event.models), None))
        if event.terminal_reason == "aborted_streaming":
            self._interrupted = True
        if event.is_error:
            self._error = self._error or result_failure(event, interrupted=self._interrupted)

    # --- helpers -------------------------------------------------------------------------

    def _abandon_open_message(self) -> None:
        """Take back the open message's blocks if it never finished: that attempt failed."""
        self._drafts.clear()
        failed = self._open_message
        if failed is None or self._open_stopped:
            return
        self._entries = [e for e in self._entries if e.message_id != failed]
        self._open_message = None
        logger.debug("rolled back the unfinished message %s", failed)

    def _commit(self, message_id: str, block: ContentBlock) -> None:
        part = _part_of(block)
        if part is None:
            logger.debug("not showing a %s block", block.type)
            return
        # An empty committed text block would only add blank lines around nothing.
        if not (isinstance(part, TextPart) and not part.text):
            self._entries.append(_Entry(message_id, part))

    def _fill_tool_result(self, event: ToolResult) -> None:
        for i, entry in enumerate(self._entries):
            part = entry.part
            if isinstance(part, ToolPart) and part.tool_use_id == event.tool_use_id:
                filled = dataclasses.replace(part, result=event.content, is_error=event.is_error)
                self._entries[i] = dataclasses.replace(entry, part=filled)
                return
        logger.debug("tool result for unknown tool use %s", event.tool_use_id)


# --- pure decisions ------------------------------------------------------------------------


def _part_of(block: ContentBlock) -> Part | ThinkingPart | None:
    match block:
        case TextBlock():
            return TextPart(block.text, committed=True)
        case ThinkingBlock():
            return ThinkingPart(block.thinking, redacted=False, committed=True)
        case RedactedThinkingBlock():
            return ThinkingPart("", redacted=True, committed=True)
        case ToolUseBlock():
            return ToolPart(block.id, block.name, dict(block.input))
        case OtherBlock():
            return None


def _blocks_text(blocks: list[ContentBlock]) -> str:
    return "".join(block.text for block in blocks if isinstance(block, TextBlock)).strip()


def _output_chars(parts: list[Part], thinking: list[ThinkingPart]) -> int:
    text = sum(len(part.text) for part in parts if isinstance(part, TextPart))
    return text + sum(len(part.text) for part in thinking)


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
