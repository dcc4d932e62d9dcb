"""Is there a submitted prompt in this document, what exactly is sent, and where does its reply
go back when an editor's save took it out? (pure)

With ``trigger: save`` any pending prompt counts as submitted. With ``trigger: marker`` (for
editors that autosave) only a prompt whose last line is the submit marker counts; the marker is
not part of what is sent, and it is removed from the document when the turn starts.

`reattach`: the streaming reply vanished from the file. Did the user delete it, or did an
editor save a copy it loaded before the reply began? Both look alike on disk: the reply block is
simply not there. The rule (docs/protocol.md):

- The file is exactly what it was before the reply began (whitespace aside): the user removed
  the block and nothing else. That is a cancel, and it is honoured.
- The file has other changes too, and the prompt is still there: an editor saved a buffer it
  loaded before our first write (a "stale buffer"), with the user's new typing in it. The
  reply is put back right after the prompt, and the user's new text is kept.
- The prompt itself is gone: the user rewrote the conversation; cancel.

So a reflexive save of an unchanged stale buffer cancels the reply (the text is still in the
turn journal); anything the user typed is never lost either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentdoc.document import Document, DocumentError, ReplyMarkers, parse, strip_comments

# A heading that was probably meant as a turn heading: any level, any case, e.g. `# User`.
_NEAR_TURN_HEADING = re.compile(
    r"^[ ]{0,3}#{1,6}[ \t]+(user|assistant)[ \t]*#*[ \t]*$", re.I | re.M
)


@dataclass(frozen=True)
class Submission:
    prompt: str  # what is sent: comments removed, marker removed
    marker_line: int | None  # character offset of the marker line to delete, if any


def _marker_offset(doc: Document, marker: str) -> int | None:
    last = doc.pending_turn()
    if last is None:
        return None
    block = doc.text[last.content_start : last.end]
    stripped = block.rstrip()
    line_start = stripped.rfind("\n") + 1
    if stripped[line_start:].strip() != marker:
        return None
    return last.content_start + line_start


def submission(doc: Document, marker: str, *, require_marker: bool) -> Submission | None:
    """The prompt to send, or None if nothing is submitted."""
    prompt = doc.pending_prompt()
    if prompt is None:
        return None
    prompt = "\n\n".join([*unsent_above(doc), prompt])
    offset = _marker_offset(doc, marker) if marker else None
    if offset is None:
        return None if require_marker else Submission(prompt, None)
    without = prompt.rstrip()
    without = without[: without.rfind(marker)].rstrip() if without.endswith(marker) else without
    return Submission(without, offset) if without else None


def unsent_above(doc: Document) -> list[str]:
    """Text in `## User` blocks right above the pending one, never answered: a paragraph typed
    below a streaming reply, above the person's own new `## User`, ends up under the heading
    agentdoc put after the reply. It goes with the prompt rather than staying unsent."""
    turns = doc.turns[:-1] if doc.unanswered() is not None else doc.turns
    found: list[str] = []
    for turn in reversed(turns[:-1]):
        if turn.role != "user":
            break
        text = strip_comments(turn.content).strip()
        if text:
            found.insert(0, text)
    return found


def remove_marker(text: str, offset: int, marker: str) -> str:
    """Delete the marker line at `offset` if it is still there (the user may have moved on)."""
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end + 1
    if text[offset:end].strip() != marker:
        return text
    return text[:offset] + text[end:]


def wants_marker(doc: Document, default_trigger: str) -> bool:
    return (doc.meta.trigger or default_trigger) == "marker"


def heading_hint(doc: Document) -> str:
    """Advice when no prompt is found but a heading looks like a mistyped turn heading."""
    for match in _NEAR_TURN_HEADING.finditer(doc.text):
        line = match.group(0).strip()
        if line not in ("## User", "## Assistant"):
            return (
                f" (`{line}` is not a turn heading: it must be exactly `## User`, two #, capital U)"
            )
    return ""


def unknown_keys(doc: Document) -> list[str]:
    """Keys under `agentdoc:` that agentdoc does not know (a typo such as `sesion`)."""
    return sorted((doc.meta.model_extra or {}).keys())


# -- a reply an editor's save took out ---------------------------------------------------------


def _same(a: str, b: str) -> bool:
    return a.rstrip() == b.rstrip()


def _without_empty_reply(text: str) -> str:
    """`text` without a trailing ``## Assistant`` heading that has nothing under it: what is
    left when the user deletes the reply's text but keeps its heading."""
    try:
        doc = parse(text)
    except (DocumentError, ValueError):
        return text
    last = doc.turns[-1] if doc.turns else None
    if last is None or last.role != "assistant" or last.content.strip():
        return text
    return text[: last.start]


def reattach(text: str, before: str, prompt: str, nonce: str) -> str | None:
    """`text` with an empty reply region re-opened after the prompt, or None to cancel."""
    if _same(text, before) or _same(_without_empty_reply(text), before):
        # Deleting the reply's text but keeping its heading is a cancel too; re-opening it
        # would add a second `## Assistant` and leave the kept one stray after the next prompt.
        return None
    try:
        doc = parse(text)
    except (DocumentError, ValueError):
        return None
    head = prompt.strip().splitlines()[0] if prompt.strip() else ""
    for turn in reversed(doc.turns):
        if turn.role != "user":
            continue
        if head and strip_comments(turn.content).strip().startswith(head):
            return ReplyMarkers(nonce).open(text, turn.end)
    return None
