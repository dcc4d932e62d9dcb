"""What a search finds: the exchanges of a document, its archive or its thinking sidecar (pure).

An exchange is one prompt and the reply to it, numbered as the document numbers its turns (an
archive's first exchange is turn 1, a document's first after its archived ones). The thinking
sidecar holds one section per turn. Each keeps the line its text starts on, so a hit can point
an editor at the line it matched.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from agentdoc.document import (
    LINE_BREAK,
    DocumentError,
    FrontmatterError,
    Turn,
    is_unanswered,
    parse,
    parse_archive,
)

Kind = Literal["document", "archive", "thinking"]
_SECTION = re.compile(r'^<a id="turn-(\d+)"></a>[ \t]*$', re.MULTILINE)


@dataclass(frozen=True)
class Exchange:
    turn: int
    prompt: str
    reply: str
    # 1-based line of the prompt's heading (its text starts on the next line), and of the
    # reply's (the thinking section's anchor line); the prompt's when there is no reply.
    prompt_line: int
    reply_line: int


class _Lines:
    """Line numbers of offsets, from the line breaks found once (a long file has thousands)."""

    def __init__(self, text: str) -> None:
        self._breaks = [m.end() for m in LINE_BREAK.finditer(text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_right(self._breaks, offset) + 1


def _pairs(turns: tuple[Turn, ...], first: int) -> list[Exchange]:
    found: list[Exchange] = []
    prompt: Turn | None = None
    number = first
    for turn in turns:
        if turn.role == "user":
            if prompt is not None:  # two prompts in a row: the first was never answered
                found.append(_exchange(number, prompt, None))
            prompt = turn
        elif not is_unanswered(turn):
            found.append(_exchange(number, prompt, turn))
            number += 1
            prompt = None
    if prompt is not None and prompt.content.strip():
        found.append(_exchange(number, prompt, None))
    return found


def _exchange(number: int, prompt: Turn | None, reply: Turn | None) -> Exchange:
    # The parse knows each heading's line: no walk over the lines of a long conversation.
    first = prompt or reply
    p_line = first.heading_line + 1 if first else 1
    r_line = reply.heading_line + 1 if reply else p_line
    return Exchange(
        number,
        prompt.content if prompt else "",
        reply.content if reply else "",
        p_line,
        r_line,
    )


def exchanges(text: str, kind: Kind) -> list[Exchange]:
    """The exchanges in a file's text; none if it is not what `kind` says it is."""
    try:
        if kind == "thinking":
            return _sections(text)
        if kind == "archive":
            return _pairs(parse_archive(text).turns, 1)
        doc = parse(text)
    except (DocumentError, FrontmatterError):
        return []
    return _pairs(doc.turns, (doc.meta.archived or 0) + 1)


def _sections(text: str) -> list[Exchange]:
    """The sidecar's per-turn sections, the thinking as the 'reply'."""
    marks = list(_SECTION.finditer(text))
    line_of = _Lines(text)
    found = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(text)
        after = LINE_BREAK.match(text, mark.end())
        body = text[after.end() if after else mark.end() : end]
        line = line_of(mark.start())
        found.append(Exchange(int(mark.group(1)), "", body, line, line))
    return found
