"""HTML comments in a document's markdown: what a prompt does not send (pure).

A comment is the person's note to themselves (or a marker agentdoc leaves); only the parts of
the text markdown reads as HTML or as inline text can hold one, so comment-like text in code is
kept.
"""

from __future__ import annotations

import re

from agentdoc.document import headings
from agentdoc.document.frontmatter import line_starts

# Besides `<!-- ... -->`, HTML also closes the degenerate `<!-->` and `<!--->` at once.
_BLOCK_COMMENT = re.compile(r"<!--(?:>|->|.*?-->|.*\Z)", re.DOTALL)
_BACKTICKS = re.compile(r"`+")


def _skip_code_span(text: str, pos: int) -> int:
    """End of the code span opened at ``pos``; just past the backtick run if it never closes."""
    run = _BACKTICKS.match(text, pos)
    assert run is not None
    width = len(run.group(0))
    for closer in _BACKTICKS.finditer(text, run.end()):
        if len(closer.group(0)) == width:
            return closer.end()
    return run.end()


def _inline_comment_end(text: str, pos: int) -> int | None:
    for degenerate in ("<!-->", "<!--->"):
        if text.startswith(degenerate, pos):
            return pos + len(degenerate)
    close = text.find("-->", pos + 4)
    return None if close < 0 else close + 3


def _strip_inline_comments(text: str) -> str:
    """Drop complete ``<!-- -->`` comments from paragraph text, leaving code spans alone."""
    out: list[str] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char == "\\":
            out.append(text[pos : pos + 2])
            pos += 2
        elif char == "`":
            end = _skip_code_span(text, pos)
            out.append(text[pos:end])
            pos = end
        elif text.startswith("<!--", pos) and (end_ := _inline_comment_end(text, pos)):
            pos = end_
        else:
            out.append(char)
            pos += 1
    return "".join(out)


def _comment_regions(markdown: str) -> list[tuple[int, int, str]]:
    """Line ranges that may hold comments: raw HTML blocks and the source of inline text."""
    regions = []
    for token in headings.parse_blocks(markdown):
        if token.map and token.type in ("html_block", "inline"):
            regions.append((token.map[0], token.map[1], token.type))
    return regions


def strip_comments(markdown: str) -> str:
    """``markdown`` without HTML comments; comment-like text in code is kept."""
    if "<!--" not in markdown:
        return markdown
    starts = [*line_starts(markdown), len(markdown)]
    out: list[str] = []
    done = 0
    for first, last, kind in _comment_regions(markdown):
        begin, end = starts[first], starts[min(last, len(starts) - 1)]
        if begin < done:
            continue
        out.append(markdown[done:begin])
        chunk = markdown[begin:end]
        if kind == "html_block":
            out.append(_BLOCK_COMMENT.sub("", chunk))
        else:
            out.append(_strip_inline_comments(chunk))
        done = end
    out.append(markdown[done:])
    return "".join(out)
