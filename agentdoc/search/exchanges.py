"""What a search finds: the exchanges of a document, its archive or its thinking sidecar (pure).

An exchange is one prompt and the reply to it, numbered as the document numbers its turns (an
archive's first exchange is turn 1, a document's first after its archived ones); a document's
title and introduction, before its first turn, are "turn 0". The thinking sidecar holds one
section per turn. Each keeps the line its text starts on, so a hit can point an editor at the
line it matched. What agentdoc itself writes into a reply (its markers, footer, failure notices
and permission blocks) is left out, as blank lines: searching a model name or a file name would
otherwise find every reply.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from agentdoc.document import (
    LINE_BREAK,
    Document,
    DocumentError,
    FrontmatterError,
    Turn,
    is_unanswered,
    parse,
    parse_archive,
)

Kind = Literal["document", "archive", "thinking"]
_SECTION = re.compile(r'^<a id="turn-(\d+)"></a>[ \t]*$', re.MULTILINE)
# agentdoc's own lines in a reply: a marker, the footer, the archive's link.
_OWN_LINE = re.compile(r"[ \t]*(?:<!-- agentdoc:.*-->|<sub>.*</sub>)[ \t]*")
_APPROVAL_START = re.compile(r"[ \t]*<!-- agentdoc:approval [0-9a-f]+ ")
_APPROVAL_END = re.compile(r"[ \t]*<!-- agentdoc:approval-end ")
# The first line of a notice agentdoc writes (after `> [!WARNING]`): a failure, a refusal, a
# cut-off reply, a conflict copy it could not merge.
_OWN_NOTICE = re.compile(
    r"> (?:\*\*(?:The reply (?:failed|was interrupted|was cut off)|Not sent:|"
    r"The model declined)|agentdoc: )"
)
_TITLE = re.compile(r"title:\s*\S")


@dataclass(frozen=True)
class Exchange:
    turn: int
    prompt: str
    text: str  # the reply as the file has it
    # 1-based line of the prompt's heading (its text starts on the next line), and of the
    # reply's (the thinking section's anchor line); the prompt's when there is no reply.
    prompt_line: int
    reply_line: int
    own_lines: bool = False  # `text` may hold agentdoc's own lines (a document's reply)

    @property
    def reply(self) -> str:
        """The words a search looks in. Made when asked: re-indexing a long conversation
        after a turn needs them only for the exchanges that changed."""
        return conversation_only(self.text) if self.own_lines else self.text


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
        own_lines=True,
    )


def conversation_only(reply: str) -> str:
    """The reply with agentdoc's own lines blanked (so line numbers still hold)."""
    lines = LINE_BREAK.split(reply)
    shown = list(lines)
    in_approval = False
    for i, line in enumerate(lines):
        if _APPROVAL_START.match(line):
            in_approval = True
        own = in_approval or _OWN_LINE.fullmatch(line) is not None
        if line.startswith("> [!WARNING]") and i + 1 < len(lines):
            own = own or _OWN_NOTICE.match(lines[i + 1]) is not None
            if own:
                for j in range(i, len(lines)):  # the whole quote block
                    if not lines[j].startswith(">"):
                        break
                    shown[j] = ""
        if own:
            shown[i] = ""
        if _APPROVAL_END.match(line):
            in_approval = False
    return "\n".join(shown)


def _preamble(doc: Document) -> Exchange | None:
    """The title and introduction before the first turn, as "turn 0": the frontmatter's
    `title:` too when no heading says it (its other keys are settings, not words to find)."""
    text = doc.text[: doc.preamble_end]
    lines = LINE_BREAK.split(text)
    head = len(LINE_BREAK.findall(text, 0, doc.split.body_offset))
    body = ["" if _OWN_LINE.fullmatch(line) else line for line in lines[head:]]
    titled = any(line.lstrip().startswith("#") for line in body)
    front = ["" if titled or not _TITLE.match(line) else line for line in lines[:head]]
    content = "\n".join(front + body)
    return Exchange(0, content, "", 0, 0) if content.strip() else None


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
    intro = _preamble(doc)
    return ([intro] if intro else []) + _pairs(doc.turns, (doc.meta.archived or 0) + 1)


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
