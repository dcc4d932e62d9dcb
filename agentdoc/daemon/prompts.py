"""Which prompt a version of a session document submits, under the user's settings: a pure
look at the text, with no checks and no errors (those come when the turn starts)."""

from __future__ import annotations

from agentdoc.config import Settings
from agentdoc.document import Document
from agentdoc.turn import submission, wants_marker


def submitted(parsed: Document, settings: Settings) -> tuple[bool, str | None]:
    """Whether the document wants a submit marker, and the prompt its settings submit."""
    marker = wants_marker(parsed, settings.trigger)
    sub = submission(parsed, settings.submit_marker, require_marker=marker)
    return marker, None if sub is None else sub.prompt
