"""The streaming reply vanished from the file: did the user delete it, or did an editor save a
copy it loaded before the reply began? (pure)

Both look alike on disk: the reply block is simply not there. The rule (docs/protocol.md):

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

from agentdoc.document import DocumentError, open_reply, parse, strip_comments


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
            return open_reply(text, turn.end, nonce)
    return None
