"""Accumulate one turn's neutral events into the reply to show, whatever agent sent them.

The rules follow the event contract (:mod:`agentdoc.agents.base.events`):

- ``BlockDelta`` appends to its block of the current message; ``BlockEnd`` ends the block,
  its ``text`` (when given) replacing the streamed preview.
- ``Retract`` drops the named message's blocks and tool calls, or (no message) every block
  not yet ended: a failed attempt the agent repeats.
- ``MessageStart`` resets the block indexes; blocks already shown stay where they are.
- ``ToolCall`` / ``ToolUpdate`` make and fill tool parts in place.
- ``TurnEnd`` ends the turn; anything after it is ignored.

Feeding stays cheap (events arrive per streamed delta); :attr:`ReplyBuilder.reply` builds a
snapshot only when asked.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from agentdoc.agents.base.events import (
    BlockDelta,
    BlockEnd,
    BlockKind,
    BlockStart,
    Event,
    MessageStart,
    MessageStop,
    Notice,
    Retract,
    Retrying,
    SessionStarted,
    StopReason,
    ToolCall,
    ToolUpdate,
    TurnEnd,
    Usage,
)
from agentdoc.agents.base.failure import Failure

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextPart:
    text: str
    committed: bool  # the agent ended the block: its text is final


@dataclass(frozen=True)
class ToolPart:
    tool_use_id: str
    name: str
    input: dict[str, Any]
    result: str | None = None
    is_error: bool = False
    title: str | None = None


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

    ``committed`` tells whether the agent ended a part; after a turn that never ended the
    unended parts stay, as the partial reply of an interrupted turn.
    """

    parts: tuple[Part, ...] = ()
    thinking: tuple[ThinkingPart, ...] = ()
    session_id: str | None = None
    model: str | None = None
    session_note: str | None = None  # how the agent's session came about (resumed, seeded…)
    retry: Retrying | None = None
    usage: Usage | None = None
    stop_reason: StopReason | None = None  # set once the turn ended with a TurnEnd
    error: str | None = None
    failure: Failure | None = None  # the error's kind and what to do about it
    branch: str | None = None  # a copy of the session as it stood at the end (TurnEnd.branch)
    interrupted: bool = False
    partial_kept: bool = False  # the agent keeps this interrupted text (TurnEnd.partial_kept)
    finished: bool = False
    output_chars: int = 0

    def text(self) -> str:
        return "".join(part.text for part in self.parts if isinstance(part, TextPart))

    @property
    def done(self) -> bool:
        return self.stop_reason is not None or self.finished


@dataclass(slots=True)
class _Block:
    """One text or thinking block as it streams, or a tool call."""

    message_id: str | None
    kind: BlockKind | None  # None: a tool call
    chunks: list[str] = field(default_factory=list)
    ended: bool = False
    tool: ToolPart | None = None

    def text(self) -> str:
        # Collapse as we go so repeated snapshots of a long block stay linear per snapshot.
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


class ReplyBuilder:
    """Feed it every event of one turn, then :meth:`finish`; read :attr:`reply` at any time."""

    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self._open: dict[int, _Block] = {}  # the current message's blocks by index
        self._tools: dict[str, _Block] = {}
        self._message: str | None = None
        self._session_id: str | None = None
        self._session_note: str | None = None
        self._model: str | None = None
        self._retry: Retrying | None = None
        self._end: TurnEnd | None = None
        self._error: str | None = None
        self._failure: Failure | None = None
        self._interrupted = False
        self._finished = False

    # --- input ---------------------------------------------------------------------------

    def feed(self, event: Event) -> None:
        if self._end is not None:
            logger.debug("ignoring %s after the end of the turn", type(event).__name__)
            return
        match event:
            case BlockDelta():
                self._on_delta(event)
            case BlockStart():
                self._start(event.index, event.kind)
            case BlockEnd():
                self._on_block_end(event)
            case MessageStart():
                self._on_message_start(event)
            case MessageStop():
                pass
            case ToolCall():
                self._on_tool_call(event)
            case ToolUpdate():
                self._on_tool_update(event)
            case Retract():
                self._on_retract(event)
            case Retrying():
                self._retry = event
            case Notice():
                self._error, self._failure = event.text, event.failure
            case SessionStarted():
                self._session_id = self._session_id or event.session_id
                self._model = self._model or event.model
                self._session_note = self._session_note or event.note
            case TurnEnd():
                self._on_end(event)
            case _:
                pass  # permission requests are the turn's, not the reply's

    @property
    def ended(self) -> bool:
        """The agent ended the turn (its ``TurnEnd``): its last word on it."""
        return self._end is not None

    def finish(self) -> None:
        """The turn's process work is over; a turn that never ended counts as interrupted."""
        if self._finished:
            return
        self._finished = True
        if self._end is None:
            self._interrupted = True

    # --- output --------------------------------------------------------------------------

    @property
    def reply(self) -> Reply:
        parts: list[Part] = []
        thinking: list[ThinkingPart] = []
        chars = 0
        for block in self._blocks:
            if block.tool is not None:
                parts.append(block.tool)
                continue
            text = block.text()
            if block.kind == "text" and text:
                parts.append(TextPart(text, committed=block.ended))
            elif block.kind == "redacted_thinking" or (
                # An ended thinking block with no text: the agent sent only that it thought
                # (the sidecar says the text was omitted).
                block.kind == "thinking" and (text or block.ended)
            ):
                redacted = block.kind == "redacted_thinking"
                thinking.append(ThinkingPart(text, redacted, committed=block.ended))
            else:
                continue
            chars += len(text)
        end = self._end
        return Reply(
            parts=tuple(parts),
            thinking=tuple(thinking),
            session_id=self._session_id,
            model=self._model,
            session_note=self._session_note,
            retry=self._retry,
            usage=end.usage if end else None,
            stop_reason=end.stop_reason if end else None,
            error=self._error,
            failure=self._failure if self._error is not None else None,
            branch=end.branch if end else None,
            interrupted=self._interrupted,
            partial_kept=end.partial_kept if end else False,
            finished=self._finished,
            output_chars=chars,
        )

    # --- event handlers ------------------------------------------------------------------

    def _start(self, index: int, kind: BlockKind) -> _Block:
        block = _Block(self._message, kind)
        self._open[index] = block
        self._blocks.append(block)
        return block

    def _on_delta(self, event: BlockDelta) -> None:
        block = self._open.get(event.index)
        if block is None or block.ended:
            block = self._start(event.index, "text")
        block.chunks.append(event.text)
        self._retry = None

    def _on_block_end(self, event: BlockEnd) -> None:
        block = self._open.get(event.index)
        if block is None:
            logger.debug("end of unknown block %s", event.index)
            return
        block.ended = True
        if event.text is not None:
            block.chunks[:] = [event.text]
        if block.kind == "text" and not block.text():
            # An empty text block would only add blank lines around nothing.
            self._blocks.remove(block)
        self._retry = None

    def _on_message_start(self, event: MessageStart) -> None:
        self._open = {}
        self._message = event.message_id
        self._retry = None
        self._model = self._model or event.model

    def _on_tool_call(self, event: ToolCall) -> None:
        part = ToolPart(event.tool_id, event.name, dict(event.input), title=event.title)
        block = _Block(self._message, None, ended=True, tool=part)
        self._tools[event.tool_id] = block
        self._blocks.append(block)
        self._retry = None

    def _on_tool_update(self, event: ToolUpdate) -> None:
        block = self._tools.get(event.tool_id)
        if block is None or block.tool is None:
            logger.debug("update for unknown tool call %s", event.tool_id)
            return
        changes: dict[str, Any] = {}
        if event.result is not None:
            changes.update(result=event.result, is_error=event.is_error)
        if event.input is not None:
            changes["input"] = dict(event.input)
        block.tool = dataclasses.replace(block.tool, **changes)

    def _on_retract(self, event: Retract) -> None:
        if event.message_id is None:
            gone = [b for b in self._blocks if not b.ended]
        else:
            gone = [b for b in self._blocks if b.message_id == event.message_id]
        if not gone:
            return
        dropped = {id(b) for b in gone}
        self._blocks = [b for b in self._blocks if id(b) not in dropped]
        self._open = {i: b for i, b in self._open.items() if id(b) not in dropped}
        self._tools = {t: b for t, b in self._tools.items() if id(b) not in dropped}
        logger.debug("took back %d block(s) of %s", len(gone), event.message_id or "the turn")

    def _on_end(self, event: TurnEnd) -> None:
        self._end = event
        self._retry = None
        self._session_id = self._session_id or event.session_id
        self._model = self._model or event.model
        self._interrupted = self._interrupted or event.interrupted
        if self._error is None:
            self._error, self._failure = event.error, event.failure
