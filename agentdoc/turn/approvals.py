"""Tool permission requests during a turn: asked in the document, answered by the person.

A permission request from the agent pauses the turn: the reply shows an approval block
(:mod:`agentdoc.document.approval`) after the tool's own block, the status says ``waiting``,
and the turn polls for an answer: a box ticked in the block by a save of the person's (never
one of our own writes), an answer file written by ``agentdoc approve`` / ``agentdoc deny``, or
the ``approval_timeout``, after which the request is denied. A request that touches the
session document, its sidecar or ``.agentdoc/`` is refused at once: those files carry the
answers, so no tool may write them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agentdoc.agents import LEGACY_AGENT, AgentTurn, OptionKind, PermissionAsked
from agentdoc.document import (
    Answer,
    Behavior,
    WriteLedger,
    atomic_write,
    find_block,
    protected_files,
    read_answer,
    read_bytes,
    render_approval,
    render_decision,
    replace_block,
    sidecar_path,
    touches,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import keep as keep_reason
from agentdoc.records import make_state_dir, read_status, state_file
from agentdoc.turn.writer import ReplyWriter

log = logging.getLogger(__name__)

SELF_REFUSAL = (
    "agentdoc refused: the agent may not change the session document, its thinking sidecar or "
    ".agentdoc/ (they hold the person's answers)"
)


class AnswerFile(BaseModel):
    behavior: Behavior
    message: str = ""


def answer_path(document: Path) -> Path:
    return state_file(document, ".answer.json")


def input_path(document: Path) -> Path:
    return state_file(document, ".approval.json")


def request_answer(document: Path, behavior: Behavior, message: str = "") -> None:
    """`agentdoc approve` / `deny`: answer the request waiting in `document`."""
    shown = read_status(document)
    if shown is None or shown.state != "waiting":
        raise AgentdocError(f"{document.name}: no tool permission request is waiting there")
    path = answer_path(document)
    make_state_dir(path.parent)
    # Whole or not at all: the turn polls for this file and takes (deletes) what it finds, so
    # an empty file caught between a plain write's create and its write would lose the answer.
    answer = AnswerFile(behavior=behavior, message=message).model_dump_json()
    atomic_write(path, answer.encode("utf-8"))


def take_answer(document: Path) -> Answer | None:
    path = answer_path(document)
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError:
        return None
    path.unlink(missing_ok=True)
    try:
        found = AnswerFile.model_validate_json(raw)
    except ValidationError:
        log.warning("%s: ignoring an unreadable answer file", document)
        return None
    return Answer(found.behavior, found.message, by="command")


# The option kind each answer of the approval block picks among the options the agent offers.
_KINDS: dict[str, tuple[OptionKind, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "always": ("allow_always", "allow_once"),
    "deny": ("reject_once", "reject_always"),
}


def option_for(request: PermissionAsked, answer: Answer) -> str | None:
    """The id of the agent's option that carries ``answer``; None if it offers none (then the
    request can only be left to end with the turn)."""
    for kind in _KINDS[answer.behavior]:
        for option in request.options:
            if option.kind == kind:
                return option.option_id
    return None


def send(proc: AgentTurn | None, request: PermissionAsked, answer: Answer) -> None:
    if answer.option is not None and answer.option < len(request.options):
        option: str | None = request.options[answer.option].option_id  # the box ticked
    else:
        option = option_for(request, answer)
    if proc is None or option is None:
        log.warning("cannot pass on the answer to %s: no matching option", request.tool_name)
        return
    proc.answer(request.request_id, option, answer.message or None)


@dataclass
class Open:
    request: PermissionAsked
    nonce: str
    block: str  # the block as we wrote it
    asked: float  # monotonic time it was written


@dataclass
class Approvals:
    """The permission requests of one turn; `shown` is what the reply displays for each tool."""

    document: Path
    ledger: WriteLedger
    timeout: float
    # Who asks, and whether with the standard three boxes (else one box per option offered).
    agent: str = LEGACY_AGENT
    standard: bool = True
    title: str = "The agent"  # how the standard block names the agent
    # The agent's answer carries the person's words; else they are kept for the next prompt.
    carries_reason: bool = True
    shown: dict[str, str] = field(default_factory=dict)  # tool_use_id → block or record
    # False while the person's copy has the open block: a merging write then would carry
    # their tick into our text, so the turn's idle write waits until an answer is read.
    may_flush: bool = True
    _open: dict[str, Open] = field(default_factory=dict)  # request_id → open request

    @property
    def waiting(self) -> str | None:
        """The tool a request waits on, if any."""
        for item in self._open.values():
            return item.request.tool_name
        return None

    def ask(self, request: PermissionAsked, proc: AgentTurn | None = None) -> bool:
        """Show a new request; True if it was refused at once (the refusal sent to `proc`)."""
        protected = protected_files(self.document, sidecar_path(self.document))
        if touches(request.input, protected):
            log.warning("%s: refused %s on a protected file", self.document, request.tool_name)
            answer = Answer("deny", SELF_REFUSAL, by="agentdoc")
            self.shown[self._key(request)] = render_decision(
                request.tool_name, request.input, answer
            )
            self._send(proc, request, answer)
            return True
        # An answer file from before this request must not answer it.
        answer_path(self.document).unlink(missing_ok=True)
        nonce = secrets.token_hex(8)
        full = self._keep_input(request)
        block = render_approval(
            request.tool_name, request.input, nonce, full, **self._shape(request)
        )
        self._open[request.request_id] = Open(request, nonce, block, time.monotonic())
        self.shown[self._key(request)] = block
        return False

    def _keep_input(self, request: PermissionAsked) -> str | None:
        path = input_path(self.document)
        with contextlib.suppress(OSError):
            make_state_dir(path.parent)
            path.write_text(json.dumps(request.input, ensure_ascii=False, indent=2))
            # Beside the document, told as the editor protocol names it; out of the tree (a
            # synced folder), by its full path.
            in_tree = path.parent == self.document.parent / ".agentdoc"
            return f".agentdoc/{path.name}" if in_tree else str(path)
        return None

    def _shape(self, request: PermissionAsked) -> dict[str, Any]:
        """The standard block, or one box per option the agent offers."""
        if self.standard or not request.options:
            return {"agent": self.title}
        return {"options": [o.name for o in request.options], "agent": self.agent}

    def _kinds(self, request: PermissionAsked) -> list[str] | None:
        if self.standard or not request.options:
            return None
        return [o.kind for o in request.options]

    @staticmethod
    def _key(request: PermissionAsked) -> str:
        return request.tool_id or request.request_id

    def poll(self, now: float) -> list[tuple[Open, Answer]]:
        """The requests answered now (in the document, by command, by timeout), with answers."""
        if not self._open:
            self.may_flush = True
            return []
        text = self._read()
        if text is not None:
            self.may_flush = not all(find_block(text, o.nonce) for o in self._open.values())
        command = take_answer(self.document)
        found: list[tuple[Open, Answer]] = []
        for request_id, item in list(self._open.items()):
            answer = command
            if answer is None and text is not None:
                answer = read_answer(text, item.nonce, self._kinds(item.request))
            if answer is None and now - item.asked >= self.timeout:
                answer = Answer("deny", _no_answer(self.timeout), by="timeout")
            if answer is None:
                continue
            command = None  # one command answers one request
            del self._open[request_id]
            self.shown[self._key(item.request)] = render_decision(
                item.request.tool_name, item.request.input, answer
            )
            found.append((item, answer))
        if not self._open:
            self.may_flush = True
        return found

    def pass_on(self, now: float, writer: ReplyWriter, proc: AgentTurn | None) -> bool:
        """Send the answers found now to the agent; True if there were any."""
        answered = self.poll(now)
        for item, answer in answered:
            log.info(
                "%s: %s %s (%s)", self.document, item.request.tool_name, answer.behavior, answer.by
            )
            # The person's ticks were read; our block goes back in their place, so the merge
            # of the next write does not carry the tick into the decision line.
            writer.update(functools.partial(_put_back, nonce=item.nonce, block=item.block))
            self._send(proc, item.request, answer)
        return bool(answered)

    def _send(self, proc: AgentTurn | None, request: PermissionAsked, answer: Answer) -> None:
        send(proc, request, answer)
        if not self.carries_reason and answer.message.strip():
            keep_reason(self.document, answer.message)

    def _read(self) -> str | None:
        """The document as the person saved it; None if it is our own write (or unreadable)."""
        try:
            data = read_bytes(self.document)
        except (OSError, AgentdocError):
            return None
        if self.ledger.is_own(self.document, data):
            return None  # our own write holds no answer: only a save of the person's does
        return data.decode("utf-8", "replace")

    def withdraw(self, request_id: str) -> None:
        item = self._open.pop(request_id, None)
        if item is not None:
            self.shown[self._key(item.request)] = render_decision(
                item.request.tool_name,
                item.request.input,
                Answer("deny", "the turn ended before an answer", by="agentdoc"),
            )

    def close(self) -> None:
        for request_id in list(self._open):
            self.withdraw(request_id)
        answer_path(self.document).unlink(missing_ok=True)


def _put_back(text: str, *, nonce: str, block: str) -> str:
    return replace_block(text, nonce, block) or text


def _no_answer(timeout: float) -> str:
    span = f"{timeout / 60:.0f} min" if timeout >= 60 else f"{timeout:.0f} s"
    return f"no answer within {span} (approval_timeout); ask again if it is still needed"
