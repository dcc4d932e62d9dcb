"""Where the ``## User`` / ``## Assistant`` turn headings are, without re-parsing the whole text.

A conversation document grows for months, and it is parsed on every save, when a reply opens,
when it closes and when the history is recorded. A full CommonMark parse costs about 0.8 s per
megabyte, so it is done once; later parses of the same document re-parse only from the last
*stable boundary* on.

A stable boundary is the line of a turn heading found by an earlier parse. Such a heading is a
top-level ATX heading: when the block parser reaches it, every container (list, quote) and every
leaf block that could swallow it (fence, HTML block, indented code) is closed, and it is a single
line, so nothing after it can change how the lines before it parse, and nothing before it can
change how the lines after it parse. Hence, if a new text has exactly the same characters up to
that line and the same heading line, the headings before it are the ones found before, and the
headings from it on are those of a parse of the rest alone. The prefix is checked by hash, so the
cache keeps no copy of any document. markdown-it-py stays the one parser: the fast path only
decides how much text it has to see (``tests/test_headings.py`` checks both agree, property
based).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

from agentdoc.document.frontmatter import LINE_BREAK

Role = Literal["user", "assistant"]
_ROLE_BY_HEADING: dict[str, Role] = {"User": "user", "Assistant": "assistant"}

# The commonmark preset keeps raw HTML on, which is what makes comments and HTML blocks real
# blocks here, exactly as a renderer will see them. Parsing keeps no state in the instance.
# Only the block structure is needed (a heading's text is its inline token's `content`, set
# by the block parser), and inline parsing never changes it: skipping it halves the cost.
_MD = MarkdownIt("commonmark").disable("inline")

# Documents remembered (a daemon has a few conversations going) and boundaries kept per
# document: the last ones, since saves append or edit the end of a conversation.
CACHE_DOCUMENTS = 64
# Scans kept under one key: documents that start alike (the same frontmatter and title, or none)
# share a key, and one must not push another's scan out.
SCANS_PER_KEY = 4
BOUNDARIES = 4
RETRIES = 3
_LOOKS_LIKE_TURN = re.compile(r"^[ ]{0,3}##[ \t]+(?:User|Assistant)\b", re.MULTILINE)


@dataclass(frozen=True)
class Heading:
    """A top-level turn heading: the offset and 0-based line where its line starts."""

    offset: int
    line: int
    role: Role


@dataclass(frozen=True)
class _Boundary:
    index: int  # which heading of the scan it is
    prefix_hash: int  # hash of the text before the heading's line
    heading_line: str  # the heading's line, line break included


@dataclass(frozen=True)
class _Scan:
    headings: tuple[Heading, ...]
    boundaries: tuple[_Boundary, ...]


_cache: OrderedDict[int, list[_Scan]] = OrderedDict()
_lock = threading.Lock()


def parse_blocks(markdown: str) -> list[Token]:
    return _MD.parse(markdown)


def full_scan(markdown: str) -> tuple[Heading, ...]:
    """Every top-level turn heading, by a parse of the whole text (the reference)."""
    return _headings(markdown, 0, 0)


def _headings(markdown: str, base_offset: int, base_line: int) -> tuple[Heading, ...]:
    tokens = parse_blocks(markdown)
    lines: list[int] = []
    roles: list[Role] = []
    for token, inline in pairwise(tokens):
        is_atx_h2 = token.type == "heading_open" and token.markup == "##"
        if is_atx_h2 and token.level == 0 and token.map and inline.content in _ROLE_BY_HEADING:
            lines.append(token.map[0])
            roles.append(_ROLE_BY_HEADING[inline.content])
    if not lines:
        return ()
    # Offsets only up to the last heading: the rest of the text need not be walked.
    starts = _line_starts_upto(markdown, lines[-1])
    return tuple(
        Heading(base_offset + starts[line], base_line + line, role)
        for line, role in zip(lines, roles, strict=True)
    )


def _line_starts_upto(text: str, last: int) -> list[int]:
    """Offsets of lines 0..``last``, counting breaks as markdown-it does (CRLF, CR, LF)."""
    starts = [0]
    if last == 0:
        return starts
    for match in LINE_BREAK.finditer(text):
        starts.append(match.end())
        if len(starts) > last:
            break
    return starts


def _line_at(text: str, offset: int) -> str:
    match = LINE_BREAK.search(text, offset)
    return text[offset : match.end() if match else len(text)]


def _boundaries(text: str, headings: tuple[Heading, ...]) -> tuple[_Boundary, ...]:
    first = max(0, len(headings) - BOUNDARIES)
    return tuple(
        _Boundary(index, hash(text[: headings[index].offset]), _line_at(text, h.offset))
        for index, h in enumerate(headings[first:], start=first)
    )


def _reuse(text: str, scans: list[_Scan]) -> tuple[tuple[Heading, ...], _Scan] | None:
    """The headings of ``text`` re-using the latest boundary still intact among ``scans``, and
    the scan it came from. The latest, not the first found: a document forked from another
    shares its start, and re-parsing from there would cost nearly a whole parse."""
    boundaries = sorted(
        ((scan.headings[b.index].offset, b, scan) for scan in scans for b in scan.boundaries),
        key=lambda item: item[0],
        reverse=True,
    )
    for offset, boundary, scan in boundaries:
        if not text.startswith(boundary.heading_line, offset):
            continue
        if hash(text[:offset]) != boundary.prefix_hash:
            continue
        head = scan.headings[boundary.index]
        rest = _headings(text[offset:], offset, head.line)
        return scan.headings[: boundary.index] + rest, scan
    return None


def scan(markdown: str) -> tuple[Heading, ...]:
    """Every top-level turn heading of ``markdown``, re-parsing only what changed.

    A document is remembered under the hash of its text before the first turn (title, intro),
    which does not change as the conversation grows; the latest other scans are tried too, so
    an edit of that text costs one miss at most.
    """
    first = _first_heading_offset(markdown)
    name = hash(markdown[:first])
    with _lock:
        same = list(_cache.get(name, ()))
        recent = [scans[0] for key, scans in reversed(_cache.items()) if key != name][:RETRIES]
    reused = _reuse(markdown, same + recent)
    found, used = reused if reused is not None else (full_scan(markdown), None)
    if found:
        entry = _Scan(found, _boundaries(markdown, found))
        # The scan this one grew from is the same document's: it is replaced, the others stay.
        kept = [scan for scan in same if scan is not used][: SCANS_PER_KEY - 1]
        with _lock:
            _cache[name] = [entry, *kept]
            _cache.move_to_end(name)
            while len(_cache) > CACHE_DOCUMENTS:
                _cache.popitem(last=False)
    return found


def _first_heading_offset(markdown: str) -> int:
    """Where the first line that looks like a turn heading starts (a cache key, not a parse)."""
    match = _LOOKS_LIKE_TURN.search(markdown)
    return match.start() if match else len(markdown)


def clear_cache() -> None:
    with _lock:
        _cache.clear()
