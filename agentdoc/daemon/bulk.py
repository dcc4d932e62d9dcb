"""Whether a change to a session document is the person typing a prompt or a bulk rewrite:
pure rules on two versions of the conversation (the git traces are `gitguard`'s).

The rule (docs/failures.md, "What the machine does"): a save sends a prompt when it kept the
conversation the daemon last saw and at most added a `## User` block to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentdoc.document import Document, is_unanswered, parsed_or_none

Verdict = Literal["send", "bulk"]


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    why: str = ""


def judge(previous: Document | None, current: Document) -> Judgement:
    """Whether the change from `previous` to `current` (which has a pending prompt) asks."""
    if previous is None:
        return Judgement("send")  # a document seen for the first time, like a new file
    # A session id appearing is our own first reply (its write may not have been seen on its
    # own); one that changes or disappears is another version of the conversation.
    if previous.meta.session is not None and previous.meta.session != current.meta.session:
        return Judgement("bulk", "its session id changed")
    # A failure notice stands in for a reply that never came; deleting it (as it suggests) to
    # send its prompt again is no rewrite of the conversation.
    before = [(t.role, t.content.strip()) for t in previous.turns if not is_unanswered(t)]
    after = [(t.role, t.content.strip()) for t in current.turns if not is_unanswered(t)]
    if len(after) < len(before):
        return Judgement("bulk", "turns disappeared: deleted, or an older version came back")
    if len(after) > len(before) + 1:
        return Judgement("bulk", "several turns arrived at once")
    if len(after) == len(before) + 1 and before and before[-1][0] == "user" and before[-1][1]:
        # A new `## User` block after a prompt that was still pending: not a typed reply.
        return Judgement("bulk", "a second prompt arrived below an unanswered one")
    return Judgement("send")


def bulk_reason(previous: str, current: Document) -> str | None:
    """Why the change to `current` is a bulk rewrite rather than a typed prompt, or None."""
    before = parsed_or_none(previous)
    if before is None:
        return None  # the last version was broken; the user's fix is what they saved
    found = judge(before, current)
    return found.why if found.verdict == "bulk" else None


def awaits_prompt(doc: Document) -> bool:
    """The document ends with a `## User` heading and no prompt under it yet."""
    return bool(doc.turns) and doc.turns[-1].role == "user" and doc.pending_prompt() is None
