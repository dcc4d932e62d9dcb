"""Moving a conversation's older exchanges into its archive file, as pure text functions.

The archive sits beside the document as ``<stem>.archive.md``: a header comment, then the moved
exchanges exactly as they were (bytes included: line endings, comments, footers). It has no
frontmatter, so it is never a session document. The document keeps its preamble, one link line
to the archive, and the last exchanges; ``agentdoc.archived`` counts the exchanges moved, so
turn numbers (thinking anchors, history, forks) keep counting from the first exchange ever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentdoc.document.filenames import link_target, shown_name
from agentdoc.document.frontmatter import dominant_newline
from agentdoc.document.parser import Document, is_unanswered, parse_archive

SUFFIX = ".archive.md"
_LINK = re.compile(r"^<sub>Exchanges 1[–-]\d+ are archived in .*</sub>[ \t]*(?:\r?\n)", re.M)


@dataclass(frozen=True)
class Moved:
    document: str  # the document's new text
    archive: str  # the archive's new text
    moved: int  # exchanges moved this time
    archived: int  # exchanges in the archive now


def archive_path(document: Path) -> Path:
    return document.with_name(document.stem + SUFFIX)


def exchange_cut(doc: Document, count: int) -> int | None:
    """Offset where the exchange after the first ``count`` (of this text) begins."""
    if count <= 0:
        return None
    seen = 0
    for index, turn in enumerate(doc.turns):
        if turn.role == "assistant" and not is_unanswered(turn):
            seen += 1
            if seen == count:
                following = doc.turns[index + 1 : index + 2]
                return following[0].start if following else len(doc.text)
    return None


def local_exchanges(doc: Document) -> int:
    return doc.turn_count() - (doc.meta.archived or 0)


def committed(archive_text: str, archived: int) -> str:
    """The archive cut back to the ``archived`` exchanges the document counts.

    An archive run that died after writing the archive but before the document leaves extra
    exchanges at the end; the document still holds them, so they are dropped here.
    """
    doc = parse_archive(archive_text)
    if archived <= 0:
        return archive_text[: doc.turns[0].start] if doc.turns else archive_text
    cut = exchange_cut(doc, archived)
    return archive_text if cut is None else archive_text[:cut]


HEADER_START = "<!-- Exchanges archived from "


def header(document_name: str, nl: str) -> str:
    return (
        f"{HEADER_START}{shown_name(document_name)} by `agentdoc archive`, oldest first. "
        f"This file is not a session document; agentdoc sends it only as history "
        f"when a session is rebuilt. -->{nl}{nl}"
    )


def link_line(name: str, archived: int, nl: str) -> str:
    return (
        f"<sub>Exchanges 1–{archived} are archived in [{shown_name(name)}]({link_target(name)})."
        f"</sub>{nl}"
    )


def move(doc: Document, keep: int, document_name: str, archive_text: str | None) -> Moved | None:
    """Move all but the last ``keep`` exchanges; None if there is nothing to move."""
    local = local_exchanges(doc)
    cut = exchange_cut(doc, local - keep)
    if cut is None or not doc.turns:
        return None
    nl = dominant_newline(doc.text)
    start = doc.turns[0].start
    already = doc.meta.archived or 0
    archived = already + local - keep
    base = header(document_name, nl) if archive_text is None else committed(archive_text, already)
    link = link_line(archive_path(Path(document_name)).name, archived, nl)
    preamble = doc.text[:start]
    if _LINK.search(preamble):
        preamble = _LINK.sub(lambda _m: link, preamble, count=1)
    else:
        preamble += link + nl
    return Moved(preamble + doc.text[cut:], base + doc.text[start:cut], local - keep, archived)
