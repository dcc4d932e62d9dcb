"""Markdown to the page's HTML with markdown-it-py, one block at a time, cached.

A document is rendered in blocks (split at blank lines outside code fences), each cached by its
text: while a reply streams only its last block changes, so a write costs the page one small
render rather than the whole reply's. The HTML a document may carry is limited to the few
tags agentdoc writes itself (folded tool blocks, the footer, comments); any other tag shows as
text, so nothing in a document (or a reply) can run script or draw a button of its own.
Callouts (`> [!WARNING]`) get a class and a title.
"""

from __future__ import annotations

import html
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

CACHE_CHARS = 8 * 1024 * 1024  # text of the blocks whose HTML is kept
_HARMLESS = re.compile(
    r'<!--.*?-->|<a id="turn-\d+">|</a>'
    r"|</?(?:details|summary|sub|sup|kbd|b|i|em|strong|code|p|br|hr)\s*/?>",
    re.DOTALL | re.IGNORECASE,
)
_CALLOUT = re.compile(r"\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]", re.IGNORECASE)
_FENCE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*\r?$\n?", re.S | re.M)


def _harmless(content: str) -> bool:
    return "<" not in _HARMLESS.sub("", content)


def _html(
    _self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    content = tokens[idx].content
    return content if _harmless(content) else html.escape(content)


def _callout_title(
    _self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    return f'<strong class="callout-title">{html.escape(tokens[idx].content)}</strong>'


def _callouts(state: StateCore) -> None:
    tokens = state.tokens
    for i in range(len(tokens) - 2):
        if tokens[i].type != "blockquote_open" or tokens[i + 2].type != "inline":
            continue
        children = tokens[i + 2].children or []
        if not children or children[0].type != "text":
            continue
        match = _CALLOUT.match(children[0].content)
        if match is None:
            continue
        kind = match.group(1).lower()
        tokens[i].attrSet("class", f"callout callout-{kind}")
        title = Token("callout_title", "", 0, content=kind.capitalize())
        children[0].content = children[0].content[match.end() :]
        children.insert(0, title)


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True, "linkify": False}).enable(
        ["table", "strikethrough"]
    )
    md.core.ruler.push("callouts", _callouts)
    md.add_render_rule("html_block", _html)
    md.add_render_rule("html_inline", _html)
    md.add_render_rule("callout_title", _callout_title)
    md.validateLink = _link_ok  # type: ignore[method-assign]
    return md


def _link_ok(url: str) -> bool:
    """Links to pages and anchors, never `javascript:`, `data:` or `file:`."""
    lowered = url.strip().lower()
    return not lowered.startswith(("javascript:", "vbscript:", "data:", "file:"))


class Renderer:
    """Blocks of markdown to HTML, each remembered by its text (bounded)."""

    def __init__(self, limit: int = CACHE_CHARS) -> None:
        self._md = _markdown()
        self._kept: OrderedDict[str, str] = OrderedDict()
        self._chars = 0
        self._limit = limit
        self._lock = threading.Lock()

    def render(self, text: str) -> str:
        return "".join(self._block(block) for block in blocks(text))

    def _block(self, block: str) -> str:
        with self._lock:
            found = self._kept.get(block)
            if found is not None:
                self._kept.move_to_end(block)
                return found
        made: str = self._md.render(block)
        with self._lock:
            self._kept[block] = made
            self._chars += len(block)
            while self._chars > self._limit and self._kept:
                old, _ = self._kept.popitem(last=False)
                self._chars -= len(old)
        return made


def blocks(text: str) -> list[str]:
    """`text` cut before each line that follows a blank one outside a code fence, unless it
    is indented (it then continues the block above: a list item's paragraph, code)."""
    found: list[str] = []
    start = 0
    fence: str | None = None
    blank = False
    at = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if fence is None and blank and stripped and line[0] not in " \t" and at > start:
            found.append(text[start:at])
            start = at
        opened = _FENCE.match(line)
        if opened is not None:
            mark = opened.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark) :]:
                fence = None
        blank = not stripped
        at += len(line)
    if start < len(text):
        found.append(text[start:])
    return found


def body_start(text: str) -> int:
    """Where the markdown after the frontmatter begins."""
    match = _FRONTMATTER.match(text)
    return match.end() if match else 0


def tail_start(text: str) -> int:
    """Where the last exchange begins (the `## User` before the last `## Assistant`), or the
    body's start: what may change while a reply streams, and what a live update re-sends.
    Searched from the end, so a long document costs no more than a short one."""
    start = body_start(text)
    reply = _last_heading(text, "## Assistant", start, len(text))
    prompt = _last_heading(text, "## User", start, len(text) if reply is None else reply)
    return start if prompt is None else prompt


def _last_heading(text: str, heading: str, start: int, end: int) -> int | None:
    at = end
    while (at := text.rfind(heading, start, at)) >= 0:
        line_end = text.find("\n", at)
        rest = text[at + len(heading) : len(text) if line_end < 0 else line_end]
        if (at == 0 or text[at - 1] in "\r\n") and not rest.strip():
            return at
    return None
