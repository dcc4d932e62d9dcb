"""Asking the index: the user's words as an FTS5 query, and one hit per matching exchange.

The words are matched as words, not as FTS5 syntax, so `foo-bar` or `C++` cannot be a syntax
error: each word (or "quoted phrase") is quoted, all must match, and a word ending in `*` matches
as a prefix. Hits come newest conversation first, and within it latest turn first.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Literal

from agentdoc.errors import AgentdocError
from agentdoc.search.index import under

Where = Literal["all", "prompts", "replies"]
_WORD = re.compile(r'"([^"]*)"|(\S+)')
_TEXT_WIDTH = 200
# As agentdoc.document.LINE_BREAK; not imported from there, which would load the parser.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Hit:
    path: bytes  # the file the exchange is in (document, archive or sidecar)
    document: bytes  # the session document it belongs to
    kind: str  # document, archive or thinking
    turn: int  # 0: the document's title and introduction, before its first turn
    line: int  # 1-based line of the file the text is on
    text: str  # the first matching line of the exchange


def words(query: str) -> list[tuple[str, bool]]:
    """The query's words or phrases, each with whether it is a prefix."""
    found = []
    for match in _WORD.finditer(query):
        word = match.group(1) if match.group(1) is not None else match.group(2)
        prefix = match.group(1) is None and word.endswith("*")
        word = word.rstrip("*") if prefix else word
        if word.strip():
            found.append((word, prefix))
    return found


def fts_query(query: str, where: Where = "all") -> str:
    terms = words(query)
    if not terms:
        raise AgentdocError("nothing to search for: give one or more words")
    quoted = " ".join('"' + w.replace('"', '""') + '"' + ("*" if p else "") for w, p in terms)
    column = {"all": "", "prompts": "{prompt} : ", "replies": "{reply} : "}[where]
    return f"{column}({quoted})"


_SELECT = """
SELECT s.path, s.document, s.kind, e.turn, e.prompt, e.reply, e.prompt_line, e.reply_line
FROM exchanges_fts JOIN exchanges e ON e.id = exchanges_fts.rowid
JOIN sources s ON s.id = e.source
WHERE exchanges_fts MATCH ? AND (s.kind != 'thinking' OR ?) AND (e.turn > 0 OR ?)
ORDER BY s.doc_ns DESC, s.document DESC, e.turn DESC, s.kind
"""


def search(
    conn: sqlite3.Connection,
    query: str,
    roots: list[bytes],
    *,
    where: Where = "all",
    thinking: bool = False,
    limit: int = 0,
) -> list[Hit]:
    """Hits under `roots` (absolute paths as bytes), newest first; `limit` 0: all of them."""
    # Turn 0, the title and introduction, is neither a prompt nor a reply.
    rows = conn.execute(_SELECT, (fts_query(query, where), thinking, where == "all"))
    needles = [w.casefold() for w, _ in words(query)]
    hits: list[Hit] = []
    for path, document, kind, turn, prompt, reply, p_line, r_line in rows:
        if roots and not under(document, roots):
            continue
        parts = [] if where == "replies" else [(prompt, p_line)]
        parts += [] if where == "prompts" else [(reply, r_line)]
        line, text = _matching_line(parts, needles)
        hits.append(Hit(path, document, kind, turn, line, text))
        if limit and len(hits) >= limit:
            break
    return hits


def _matching_line(parts: list[tuple[str, int]], needles: list[str]) -> tuple[int, str]:
    """The first line holding one of the words; else the first line with text."""
    fallback: tuple[int, str] | None = None
    for content, heading in parts:
        for index, line in enumerate(_LINE_BREAK.split(content)):
            shown = line.strip()
            if not shown or (shown.startswith("<!--") and shown.endswith("-->")):
                continue  # blank, or agentdoc's own marks
            fallback = fallback or (heading + 1 + index, shown)
            if any(n in shown.casefold() for n in needles):
                return heading + 1 + index, shown[:_TEXT_WIDTH]
    return fallback or (parts[0][1] if parts else 1, "")
