"""Write model text into a document safely: it can never forge a turn heading or a boundary.

:func:`escape_reply` escapes lines that would parse as ``## User`` / ``## Assistant``;
:func:`seal_reply` also closes any fence or raw HTML block the text leaves open, so the heading
that follows the reply is still a heading on the next parse.
"""

from __future__ import annotations

import logging
import re

from agentdoc.document.frontmatter import dominant_newline, line_starts
from agentdoc.document.parser import parse_blocks, turn_headings

logger = logging.getLogger(__name__)

_PROBE_HEADING = "## User"
_MAX_ESCAPE_PASSES = 8
# End conditions of the raw HTML blocks that only close on an explicit marker (CommonMark 4.6,
# kinds 1-5); kinds 6 and 7 end at a blank line, which the next heading brings anyway.
_HTML_CLOSERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"<!--"), "-->"),
    (re.compile(r"<\?"), "?>"),
    (re.compile(r"<!\[CDATA\["), "]]>"),
    (re.compile(r"<![A-Za-z]"), ">"),
)
_RAW_TEXT_TAG = re.compile(r"<(script|pre|style|textarea)(?=[\s>]|\Z)", re.IGNORECASE)


def _escape_lines(text: str, lines: list[int]) -> str:
    starts = line_starts(text)
    for line in sorted(lines, reverse=True):
        at = text.index("#", starts[line])
        text = text[:at] + "\\" + text[at:]
    return text


def escape_reply(text: str) -> str:
    """Backslash-escape every line of ``text`` that would parse as a turn heading."""
    # One pass suffices in practice; further passes only guard against an escape changing the
    # structure around it so that another line becomes a heading.
    if not _MAYBE_TURN.search(text):
        return text  # not one line that could be a turn heading: no parse needed
    for _ in range(_MAX_ESCAPE_PASSES):
        heads = turn_headings(text)
        if not heads:
            return text
        text = _escape_lines(text, [line for line, _ in heads])
    logger.warning("reply text still has turn headings after escaping")
    return text


# Sound pre-filters for the two parses sealing needs, so a streamed flush of an ordinary reply
# parses nothing. A top-level heading line starts with at most three spaces, then `##` and a
# space or tab (a tab before it makes indented code). The probe heading after a blank line
# closes every container (it is not indented and not a paragraph for lazy continuation), so
# only a fence or HTML block can swallow it, and that block's opening line starts, inside any
# container, with a marker after spaces, `>` or list markers. Line starts are counted as the
# parser counts them: after LF, CR or CRLF.
_MAYBE_TURN = re.compile(r"(?:\A|[\n\r])[ ]{0,3}##[ \t]+(?:User|Assistant)")
_MAYBE_OPENER = re.compile(r"(?:\A|[\n\r])[ \t>*+\-0-9.)]*(?:```|~~~|<)")


def _html_closer(source: str) -> str | None:
    opener = source.lstrip(" ")
    if tag := _RAW_TEXT_TAG.match(opener):
        return f"</{tag.group(1)}>"
    return next((closer for start, closer in _HTML_CLOSERS if start.match(opener)), None)


def _open_block_closer(text: str) -> str | None:
    """The line that ends the block which would swallow a heading placed after ``text``."""
    if not _MAYBE_OPENER.search(text):
        return None  # no line could open a fence or an HTML block: no parse needed
    probe = f"{text}\n\n{_PROBE_HEADING}\n"
    probe_line = len(line_starts(text)) + 1
    if (probe_line, "user") in turn_headings(probe):
        return None
    for token in reversed(parse_blocks(probe)):
        if token.map and token.map[0] <= probe_line < token.map[1]:
            if token.type == "fence":
                return token.markup
            if token.type == "html_block":
                return _html_closer(token.content)
    return None


def seal_reply(text: str) -> str:
    """:func:`escape_reply`, then close any block left open, so what follows still parses."""
    sealed = escape_reply(text)
    newline = dominant_newline(sealed)
    for _ in range(4):
        closer = _open_block_closer(sealed)
        if closer is None:
            return sealed
        if sealed.endswith(("\n", "\r")):
            sealed = f"{sealed}{closer}{newline}"
        else:
            sealed = f"{sealed}{newline}{closer}"
    logger.warning("reply still leaves a block open after sealing; the next heading may be lost")
    return sealed
