"""Obsidian's links in a prompt: ``[[note]]`` and ``![[Pasted image.png]]``, found and resolved.

Obsidian names a file by its name, not its path: ``[[Plan]]`` is ``Plan.md`` wherever it lives in
the vault. When several files have that name, the one closest to the vault's top wins, then the
first by path; ``[[folder/Plan]]`` narrows the name to paths ending that way, ``[[/Plan]]``
starts at the vault's top and ``[[./Plan]]`` / ``[[../Plan]]`` at the linking note's folder.
Names compare without regard to case, and ``.md`` is implied. ``|alias`` is display text only;
``#Heading`` names a section (``#^block`` a block, which we take as the whole note).

These functions only decide; reading the files, under the include rules, is
:mod:`agentdoc.turn.includes`'s job.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from markdown_it import MarkdownIt

# A target holds no brackets, `|`, `#` or `^` (Obsidian forbids them in names); then an optional
# `#heading` and an optional `|alias`.
_LINK = re.compile(r"(!?)\[\[([^\[\]|#^\n]+)(?:#([^\[\]|\n]*))?(?:\|[^\[\]\n]*)?\]\]")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


@dataclass(frozen=True)
class WikiLink:
    written: str  # as in the prompt, for messages
    target: str  # the name or path, without `#heading` and `|alias`
    heading: str  # after `#`; "" for none
    embed: bool  # `![[…]]`
    line: int  # 0-based last line of the paragraph holding it: its contents go after it

    @property
    def key(self) -> tuple[str, str]:
        return self.target.casefold(), self.heading.casefold()


def find(prompt: str) -> list[WikiLink]:
    """The links in the prompt's text, in order; code spans and code blocks hold none."""
    links: list[WikiLink] = []
    for token in MarkdownIt("commonmark").parse(prompt):
        if token.type != "inline" or token.map is None:
            continue
        for child in token.children or ():
            if child.type != "text":
                continue
            for match in _LINK.finditer(child.content):
                target = match.group(2).strip()
                if target:
                    heading = (match.group(3) or "").strip()
                    embed = match.group(1) == "!"
                    links.append(WikiLink(match.group(0), target, heading, embed, token.map[1] - 1))
    return links


def pick(target: str, files: Iterable[str], here: str = "") -> str | None:
    """The vault file (a ``/``-separated path from the vault's top) a link's target names.

    ``here`` is the linking note's folder within the vault ("" at the top).
    """
    wanted = target.strip()
    if wanted.startswith(("./", "../")):
        exact: str | None = posixpath.normpath(posixpath.join(here, wanted))
    elif wanted.startswith("/"):
        exact = wanted.lstrip("/")
    else:
        exact = None
    given = (exact or wanted).casefold()
    names = (given, given + ".md")
    matches = [
        path
        for path in files
        if path.casefold() in names
        or (exact is None and path.casefold().endswith(tuple("/" + n for n in names)))
    ]
    # Closest to the vault's top first, then by path; a name given with its extension beats the
    # same name with `.md` added (`[[a.png]]` is the picture even beside a note `a.png.md`).
    return min(
        matches,
        key=lambda p: (p.count("/"), not p.casefold().endswith(given), p),
        default=None,
    )


def is_image(path: str) -> bool:
    return path.casefold().endswith(IMAGE_SUFFIXES)


def section(text: str, heading: str) -> str | None:
    """The part of a note under ``heading`` (to the next heading as high or higher), else None.

    ``a#b`` names heading b under heading a (Obsidian's nested form): the last one decides.
    A block reference (``^id``) is taken as the whole note.
    """
    if not heading or heading.startswith("^"):
        return text
    wanted = _plain(heading.split("#")[-1])
    lines = text.split("\n")
    tokens = MarkdownIt("commonmark").parse(text)
    for number, token in enumerate(tokens):
        if token.type != "heading_open" or token.map is None:
            continue
        if _plain(tokens[number + 1].content) != wanted:
            continue
        level = int(token.tag[1])
        end = len(lines)
        for later in tokens[number + 1 :]:
            if later.type == "heading_open" and later.map and int(later.tag[1]) <= level:
                end = later.map[0]
                break
        return "\n".join(lines[token.map[0] : end]).rstrip("\n") + "\n"
    return None


def _plain(heading: str) -> str:
    return " ".join(heading.split()).casefold()
