"""A whole document saved from an older copy, merged with what agentdoc wrote since (pure).

An editor that did not reload (plain Vim answering `y` to "the file has changed", a phone whose
sync tool made a conflict copy) saves a copy made before agentdoc's last write: without a merge
it would delete the reply and the `session:` key. `merge_document(base, ours, theirs)` is a
three-way merge by lines (the `merge3` library): `base` is the copy the other side started from,
`ours` what agentdoc wrote since, `theirs` the copy that was saved. Every change of either side
is applied. Where both changed the same spot, agentdoc's lines come first and the lines the
person added follow, so neither loses one; only a person's removal of lines agentdoc changed
too cannot be applied, and the merge says it was not clean.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from merge3 import Merge3

from agentdoc.document.frontmatter import FrontmatterError, read_meta, split
from agentdoc.document.frontmatter_edit import set_meta


@dataclass(frozen=True)
class Merged:
    text: str
    clean: bool  # False: a removal of the person's met a change of ours and was not applied


def merge_document(base: str, ours: str, theirs: str) -> Merged:
    """`ours` with every change made from `base` to `theirs` applied (see the module doc)."""
    if theirs in (base, ours):
        return Merged(ours, True)
    if ours == base:
        return Merged(theirs, True)
    out: list[str] = []
    clean = True
    merger = Merge3(_lines(base), _lines(ours), _lines(theirs))
    for group in merger.merge_groups():
        if group[0] == "conflict":
            _, was, mine, typed = group
            added, removed = _added(list(was), list(typed))
            clean = clean and not removed
            out += _join(list(mine), added)
        else:
            out += group[1]
    return Merged("".join(out), clean)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _added(was: list[str], typed: list[str]) -> tuple[list[str], bool]:
    """The lines the person added in place of `was`, and whether they removed any of it."""
    added: list[str] = []
    removed = False
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, was, typed, autojunk=False).get_opcodes():
        if tag in ("insert", "replace"):
            added += typed[j1:j2]
        removed = removed or (tag in ("delete", "replace") and any(s.strip() for s in was[i1:i2]))
    return added, removed


def _join(mine: list[str], added: list[str]) -> list[str]:
    """Our lines, then the person's; an empty heading of ours that the person's text opens with
    again (a `## User` agentdoc added after its reply, and one the person typed) is kept once."""
    if not added:
        return mine
    if mine and not mine[-1].endswith("\n"):
        mine = [*mine[:-1], mine[-1] + "\n"]
    ours_last = _last_words(mine)
    theirs_first = next((line for line in added if line.strip()), None)
    if ours_last is not None and theirs_first is not None:
        at, heading = ours_last
        if heading.startswith("#") and heading.strip() == theirs_first.strip():
            mine = mine[:at]
    if mine and not mine[-1].strip():
        # Our lines end with a blank line already: the person's first blank ones are not new.
        while added and not added[0].strip():
            added = added[1:]
    return mine + added


def _last_words(lines: list[str]) -> tuple[int, str] | None:
    for at in range(len(lines) - 1, -1, -1):
        if lines[at].strip():
            return at, lines[at]
    return None


def merge_copy(ours: str, copy: str) -> Merged:
    """A sync tool's conflict copy merged into the document `ours`, with no known ancestor.

    The lines both hold stand for the ancestor, so what either side added is kept (a removal
    made on one side reads as the other side's text and is kept too: nothing is lost). A reply
    the copy caught while it streamed is ours: its markers are dropped, and a line it holds
    cut short counts as our whole line.
    """
    merged = _merge_unrelated(ours, copy)
    if _front_reads(merged.text) or not _front_reads(ours):
        return merged
    # Both sides' versions of a frontmatter line, kept, make it unreadable: `agentdoc: {}` from
    # a copy made before the first reply, beside ours with the session under it, is the key
    # twice. The frontmatter is then ours, with the keys only the copy's `agentdoc:` holds; the
    # bodies are merged as ever. (The copy itself is kept whole where it was put aside.)
    ours_split, copy_split = split(ours), split(copy)
    head = ours[: ours_split.body_offset]
    body = _merge_unrelated(ours_split.body, copy_split.body)
    text = head + body.text
    ours_meta = read_meta(ours) or {}  # it reads (above)
    if theirs_meta := _meta_or_none(copy):
        text = set_meta(text, {k: v for k, v in theirs_meta.items() if k not in ours_meta})
    return Merged(text, body.clean)


def _merge_unrelated(ours: str, copy: str) -> Merged:
    mine = _lines(ours)
    theirs = [_whole(line, mine) for line in _lines(copy) if not _our_marker(line)]
    matcher = SequenceMatcher(None, mine, theirs, autojunk=False)
    base = [line for a, _, size in matcher.get_matching_blocks() for line in mine[a : a + size]]
    return merge_document("".join(base), ours, "".join(theirs))


def _meta_or_none(text: str) -> dict[str, Any] | None:
    try:
        return read_meta(text)
    except FrontmatterError:
        return None


def _front_reads(text: str) -> bool:
    try:
        read_meta(text)
    except FrontmatterError:
        return False
    return True


def _our_marker(line: str) -> bool:
    return line.lstrip().startswith(("<!-- agentdoc:reply ", "<!-- agentdoc:end "))


def _whole(line: str, mine: list[str]) -> str:
    """`line`, or the line of ours it is the start of (a streaming line caught mid-way)."""
    body = line.rstrip("\r\n")
    if not body.strip() or line in mine:
        return line
    return next(
        (m for m in mine if m.startswith(body) and len(m.strip()) > len(body.strip())), line
    )
