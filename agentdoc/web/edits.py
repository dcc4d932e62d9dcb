"""The page's edits of a document, made as an editor's save is made.

Each edit is a function of the document's text. It is written atomically (fileio's swap), not
recorded as agentdoc's own write, so the daemon takes it as the person's save: the same
settle, gate, budget and policy. When another write lands between the read and ours (a reply
streaming in, an editor's save), the swap hands it back and the edit is made again on it, so
neither is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from agentdoc.document import (
    Behavior,
    Document,
    DocumentError,
    asked_in,
    decode,
    dominant_newline,
    parse,
    read_bytes,
    tick,
    write_text,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import read_status, request_cancel
from agentdoc.turn import request_answer

log = logging.getLogger(__name__)

ATTEMPTS = 8

Edit = Callable[[str], str]


def edit(path: Path, change: Edit) -> None:
    """Apply `change` to the file and write the result; AgentdocError says why not."""
    data = read_bytes(path)
    new = change(decode(path, data))
    for _ in range(ATTEMPTS):
        displaced = write_text(path, new, expected=data)
        if displaced is None:
            return
        data = new.encode("utf-8")
        try:
            new = change(decode(path, displaced))
        except AgentdocError:
            write_text(path, decode(path, displaced))  # theirs back, as it was
            raise
    raise AgentdocError(f"{path.name} keeps changing; the page's edit was not saved")


def add_prompt(prompt: str, marker: str | None) -> Edit:
    """Append `prompt` under the last `## User` (a new one below a reply that has none yet),
    with the submit marker on its last line when the document sends on the marker only."""

    lines = prompt.strip().splitlines() + ([marker] if marker else [])
    first_seen: int | None = None  # in the text the edit was first made on

    def change(text: str) -> str:
        nonlocal first_seen
        try:
            doc = parse(text)
        except DocumentError as exc:
            raise AgentdocError(str(exc)) from exc
        if not prompt.strip():
            raise AgentdocError("the prompt is empty")
        # Made again on a save that displaced ours (see `edit`), the prompt may be in it
        # already: the daemon's writer merges our first write into its next flush, and that
        # flush is what our second write displaces. Added once more, it would be sent twice.
        seen = _times_in_prompts(doc, lines)
        if first_seen is None:
            first_seen = seen
        elif seen > first_seen:
            return text
        nl = dominant_newline(text)
        words = nl.join(lines)
        last = doc.turns[-1] if doc.turns else None
        if last is not None and last.role == "user" and doc.unanswered() is None:
            head, rest = text[: last.end], text[last.end :]
            return head.rstrip() + nl * 2 + words + nl + (nl + rest.lstrip() if rest else "")
        return text.rstrip() + nl * 2 + "## User" + nl * 2 + words + nl

    return change


def _times_in_prompts(doc: Document, lines: list[str]) -> int:
    """How often `lines` stand, as whole lines, in the document's `## User` blocks."""
    wanted = [line.rstrip() for line in lines]
    n = len(wanted)
    found = 0
    for turn in doc.turns:
        if turn.role == "user":
            have = [line.rstrip() for line in turn.content.splitlines()]
            found += sum(have[i : i + n] == wanted for i in range(len(have) - n + 1))
    return found


def answer(behavior: Behavior, reason: str, nonce: str | None) -> Edit:
    """Tick the box of `behavior` in the open permission request (`nonce`, else the first)."""

    def change(text: str) -> str:
        asked = [a for a in asked_in(text) if nonce is None or a.nonce == nonce]
        if not asked:
            raise AgentdocError("no permission request is waiting in this document")
        ticked = tick(text, asked[0].nonce, behavior, reason)
        if ticked is None:
            raise Unticked(asked[0].nonce)
        return ticked

    return change


class Unticked(AgentdocError):
    """The request's boxes name none of allow or deny (an agent's own options): it is answered
    by the answer file `agentdoc approve` / `deny` write instead."""


def apply_form(
    path: Path, what: str, form: dict[str, str], marker: Callable[[str], str | None]
) -> None:
    """The page's form `what` (prompt, answer, cancel) made on the document; `marker`: the
    submit marker a prompt ends with in a document of this text, if any."""
    match what:
        case "prompt":
            text = decode(path, read_bytes(path))
            edit(path, add_prompt(form.get("prompt", ""), marker(text)))
        case "answer":
            behavior: Behavior = "deny" if form.get("behavior") == "deny" else "allow"
            reason = form.get("reason", "") if behavior == "deny" else ""
            try:
                edit(path, answer(behavior, reason, form.get("nonce") or None))
            except Unticked:
                request_answer(path, behavior, reason)
        case "cancel":
            status = read_status(path)
            if status is None or status.state not in ("streaming", "waiting"):
                raise AgentdocError("no reply is streaming into this document")
            request_cancel(path)
