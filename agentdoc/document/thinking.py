"""The thinking sidecar: ``<stem>.thinking.md`` beside the document, one section per turn.

Thinking is written here as it streams and never into the document, and nothing reads this file
back into a prompt. Each section starts with an explicit anchor line (``<a id="turn-N">``) so the
footer link works in any renderer, and so a section is found again by content on the next write.
The file has no frontmatter, so it can never be taken for a session document.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from agentdoc.agents import ThinkingPart
from agentdoc.document.fileio import read_text, write_text
from agentdoc.document.filenames import fitting_name, link_target, shown_name
from agentdoc.document.ledger import WriteLedger

_ANCHOR = '<a id="turn-{n}"></a>'
# Newer models return a thinking block with only its signature unless the request asks for the
# text (the config's `thinking_display`); an empty section would look like a lost write.
OMITTED = (
    "*(thinking omitted by the API: this block came back with no text, only its signature; "
    'set `thinking_display = "summarized"` in the config to ask for a summary)*'
)
_ANY_ANCHOR = re.compile(r'^<a id="turn-\d+"></a>[ \t]*$', re.MULTILINE)


def sidecar_path(document: Path) -> Path:
    return document.with_name(fitting_name(document.stem, ".thinking.md"))


def sidecar_link(document: Path, turn: int) -> str:
    return f"{link_target(sidecar_path(document).name)}#turn-{turn}"


def header(document: Path) -> str:
    name = shown_name(document.name)
    return (
        f"# Thinking: {name}\n\n"
        f"The model's thinking for [{name}]({link_target(document.name)}), one section per turn. "
        "It is kept here for you to read; agentdoc never sends it back to the model.\n"
    )


def render_section(
    turn: int, started: datetime, session_id: str | None, parts: tuple[ThinkingPart, ...]
) -> str:
    when = started.strftime("%Y-%m-%d %H:%M:%S %Z").strip()
    meta = f"*{when}" + (f" · session `{session_id}`" if session_id else "") + "*"
    lines = [_ANCHOR.format(n=turn), f"## Turn {turn}", "", meta, ""]
    for part in parts:
        if part.redacted:
            lines += ["*(redacted thinking: the model's reasoning here is encrypted)*", ""]
        elif part.text.strip():
            # An anchor-shaped line inside thinking would split the section on the next write.
            lines += [_ANY_ANCHOR.sub(lambda m: "\\" + m.group(0), part.text.rstrip("\n")), ""]
        elif part.committed and lines[-2:] != [OMITTED, ""]:
            lines += [OMITTED, ""]
    return "\n".join(lines)


def splice_section(text: str, turn: int, section: str) -> str:
    """Replace turn N's section (or append it) in the sidecar text."""
    anchor = _ANCHOR.format(n=turn)
    start = text.find(anchor)
    if start < 0:
        return text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    following = _ANY_ANCHOR.search(text, start + len(anchor))
    end = following.start() if following else len(text)
    tail = text[end:]
    return text[:start] + section.rstrip("\n") + "\n" + ("\n" + tail if tail else "")


def drop_section(text: str, turn: int) -> str:
    """The sidecar text without turn N's section (unchanged if it has none)."""
    start = text.find(_ANCHOR.format(n=turn))
    if start < 0:
        return text
    following = _ANY_ANCHOR.search(text, start + 1)
    rest = text[following.start() :] if following else ""
    return text[:start].rstrip("\n") + "\n" + ("\n" + rest if rest else "")


def drop_thinking(document: Path, turn: int) -> None:
    """Take turn N's section out of the document's sidecar (`undo`), if there is one."""
    path = sidecar_path(document)
    if path.exists():
        text = read_text(path)
        if (kept := drop_section(text, turn)) != text:
            write_text(path, kept)


class ThinkingSidecar:
    """Streams one turn's thinking into the sidecar, writing only when it changed."""

    def __init__(self, document: Path, turn: int, started: datetime, ledger: WriteLedger) -> None:
        self.path = sidecar_path(document)
        self.document = document
        self.turn = turn
        self.started = started
        self.ledger = ledger
        self._last: str | None = None

    def update(self, parts: tuple[ThinkingPart, ...], session_id: str | None) -> bool:
        """Write the section; returns whether this turn has any thinking recorded."""
        if not parts:
            return False
        section = render_section(self.turn, self.started, session_id, parts)
        if section == self._last:
            return True
        existing = read_text(self.path) if self.path.exists() else header(self.document)
        write_text(self.path, splice_section(existing, self.turn, section), self.ledger)
        self._last = section
        return True
