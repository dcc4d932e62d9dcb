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


def reattach(text: str, before: str, prompt: str, nonce: str) -> str | None:
    """`text` with an empty reply region re-opened after the prompt, or None to cancel."""
    if _same(text, before):
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
