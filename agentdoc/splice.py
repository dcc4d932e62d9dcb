"""Putting reply text into the current document without touching the user's text (pure).

While a turn streams, its reply lives between two HTML-comment markers that carry a per-turn
nonce, so the region is found by content, wherever the user's edits have moved it, and model text
cannot forge it. Everything outside the markers is the user's and is passed through unchanged.
When the turn ends the markers are replaced by the final reply, its footer and a fresh
``## User`` heading (unless the user already started one right below).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import cast

import merge3

START = "<!-- agentdoc:reply {nonce} (streaming; text you type between these markers is kept) -->"
END = "<!-- agentdoc:end {nonce} -->"
_USER_HEADING = re.compile(r"[ ]{0,3}##[ \t]+User[ \t]*#*[ \t]*(\r?\n|$)")


def new_nonce() -> str:
    return secrets.token_hex(4)


@dataclass(frozen=True)
class Region:
    start: int  # offset of the start marker line
    content_start: int  # offset just after the start marker line
    content_end: int  # offset of the end marker line
    end: int  # offset just after the end marker line (including its newline)


def newline_of(text: str) -> str:
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def with_newlines(text: str, newline: str) -> str:
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def find_region(text: str, nonce: str) -> Region | None:
    head = START.format(nonce=nonce)
    tail = END.format(nonce=nonce)
    start = text.find(head)
    if start < 0:
        return None
    content_start = _line_end(text, start)
    content_end = text.find(tail, content_start)
    if content_end < 0:
        return None
    return Region(start, content_start, content_end, _line_end(text, content_end))


def open_reply(text: str, insert_at: int, nonce: str) -> str:
    """Insert the ``## Assistant`` heading and an empty marked region at `insert_at`.

    `insert_at` is the end of the prompt's block. Nothing of the user's is removed: we only add
    line breaks so the heading starts its own paragraph.
    """
    nl = newline_of(text)
    before, after = text[:insert_at], text[insert_at:]
    if before and not before.endswith("\n"):
        before += nl
    if before and not before.endswith(nl + nl) and before.strip():
        before += nl
    block = f"## Assistant{nl}{nl}{START.format(nonce=nonce)}{nl}{END.format(nonce=nonce)}{nl}"
    if after and not after.startswith(("\n", "\r\n")):
        block += nl
    return before + block + after


def fill_region(text: str, nonce: str, body: str, last_body: str) -> str | None:
    """Replace the region's content with `body`; None if the markers are gone.

    `last_body` is what we wrote there last time: if the user typed inside the region since,
    their edits are merged into the new body rather than overwritten.
    """
    region = find_region(text, nonce)
    if region is None:
        return None
    current = text[region.content_start : region.content_end]
    merged = merge_text(_region_text(last_body, text), _region_text(body, text), current)
    return text[: region.content_start] + merged + text[region.content_end :]


def _region_text(body: str, text: str) -> str:
    nl = newline_of(text)
    body = with_newlines(body, nl)
    return body if not body or body.endswith(nl) else body + nl


def close_region(text: str, nonce: str, body: str, last_body: str) -> str | None:
    """Replace the whole region (markers included) with the final body and a fresh prompt."""
    region = find_region(text, nonce)
    if region is None:
        return None
    nl = newline_of(text)
    current = text[region.content_start : region.content_end]
    final = _region_text(body.rstrip("\n"), text)
    merged = merge_text(_region_text(last_body, text), final, current)
    after = text[region.end :]
    if _USER_HEADING.match(after.lstrip("\r\n")):
        # The user already opened the next prompt below the reply: don't add another heading.
        closing = after if after.startswith(("\n", "\r\n")) else nl + after
    else:
        closing = f"{nl}## User{nl}{nl}{after}"
    return text[: region.start] + merged + closing


def merge_text(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of a reply region, per character.

    `base` is what we last wrote, `ours` what we want to write now, `theirs` what is on disk.
    Edits on one side only are taken as they are. Where both sides changed the same spot (the
    usual case: the user typed at the end of the streaming text while more text arrived), our
    text comes first and the user's typing follows it, so neither loses a character.
    """
    if theirs == base:
        return ours
    if ours == base:
        return theirs
    out: list[str] = []
    m = merge3.Merge3(list(base), list(theirs), list(ours))
    for region in m.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out.append(base[region[1] : region[2]])
        elif kind in ("a", "same"):
            out.append(theirs[region[1] : region[2]])
        elif kind == "b":
            out.append(ours[region[1] : region[2]])
        else:
            zs, ze, ts, te, os_, oe = cast(tuple[int, ...], region)[1:]
            out.append(ours[os_:oe])
            if not _is_subsequence(theirs[ts:te], base[zs:ze]):
                out.append(theirs[ts:te])
    return "".join(out)


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)
