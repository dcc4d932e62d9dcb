"""Putting reply text into the current document without touching the user's text (pure).

While a turn streams, its reply lives between two HTML-comment markers that carry a per-turn
nonce, so the region is found by content, wherever the user's edits have moved it, and model text
cannot forge it. Everything outside the markers is the user's and is passed through unchanged.
When the turn ends the markers are replaced by the final reply, its footer and a fresh
``## User`` heading (unless the user already started one right below).

Inside the region the user may type too. Each write merges: the new region is our new text,
exactly and completely, plus every run of characters the user typed, carried to the same place.
Characters of ours that are missing on disk are put back rather than deleted, because an editor
saving a copy it loaded a few writes ago looks exactly like a deletion. The end marker names the
write it belongs to, so such a copy is merged against the write it was made from (when the
caller passes its earlier writes).
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentdoc.document.merge import merge_text
from agentdoc.document.parser import turn_headings

START = "<!-- agentdoc:reply {nonce} (streaming; text you type between these markers is kept) -->"
END = "<!-- agentdoc:end {nonce} -->"
# What every open reply region starts with, whatever its nonce.
STREAMING_MARK = START.split("{nonce}")[0].rstrip()
# The end marker as `fill_region` writes it: `version` names the body written with it.
_END_WRITTEN = "<!-- agentdoc:end {nonce} {version} -->"
_USER_HEADING = re.compile(r"[ ]{0,3}##[ \t]+User[ \t]*#*[ \t]*(\r?\n|$)")


# --- the region -------------------------------------------------------------------------------


def new_nonce() -> str:
    return secrets.token_hex(4)


@dataclass(frozen=True)
class Region:
    start: int  # offset of the start marker line
    content_start: int  # offset just after the start marker line
    content_end: int  # offset of the end marker
    end: int  # offset just after the end marker line (including its newline)
    marker_end: int  # offset just after the end marker itself
    version: str | None  # the write the end marker names; None for the empty region we open


def newline_of(text: str) -> str:
    if "\r" not in text:
        return "\n"  # the common case, found without counting a long document's lines twice
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def with_newlines(text: str, newline: str) -> str:
    if newline == "\n":
        return text
    return text.replace("\r\n", "\n").replace("\n", newline)


def _line_end(text: str, pos: int) -> int:
    nl = text.find("\n", pos)
    return len(text) if nl < 0 else nl + 1


def _end_marker(nonce: str) -> re.Pattern[str]:
    return re.compile(re.escape(f"<!-- agentdoc:end {nonce}") + r"(?: ([0-9a-f]{8}))? -->")


def _version(body: str) -> str:
    return hashlib.blake2b(body.encode("utf-8"), digest_size=4).hexdigest()


def find_region(text: str, nonce: str) -> Region | None:
    start = text.find(START.format(nonce=nonce))
    if start < 0:
        return None
    content_start = _line_end(text, start)
    tail = _end_marker(nonce).search(text, content_start)
    if tail is None:
        return None
    end = _line_end(text, tail.start())
    return Region(start, content_start, tail.start(), end, tail.end(), tail.group(1))


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


def fill_region(
    text: str, nonce: str, body: str, last_body: str, earlier: Sequence[str] = ()
) -> str | None:
    """Replace the region's content with `body`; None if the markers are gone.

    `last_body` is what we wrote there last time and `earlier` what we wrote before that: if the
    user typed inside the region since, their text is merged into the new body rather than
    overwritten. When their editor saved a copy of an older write, that write is the merge base
    if it is in `earlier`; otherwise our last write is, and the older copy's own text (a fence
    we had closed, an escape) may be kept as if the user had typed it.
    """
    region = find_region(text, nonce)
    if region is None:
        return None
    merged = _merge_region(text, region, body, _written_as(region, last_body, earlier))
    marker = _END_WRITTEN.format(nonce=nonce, version=_version(body))
    return text[: region.content_start] + merged + marker + text[region.marker_end :]


@dataclass(frozen=True)
class Spliced:
    """A new version of a document: `source` with its bytes `start:end` replaced by `filled`."""

    source: bytes
    start: int  # where the region's content starts
    end: int  # where the text after the region's end marker starts
    filled: bytes  # the region's new content and end marker

    @property
    def unchanged(self) -> bool:
        return self.source[self.start : self.end] == self.filled

    def pieces(self) -> list[bytes | memoryview]:
        """The new version in three pieces, the long ones views of `source` (no copies)."""
        view = memoryview(self.source)
        return [view[: self.start], self.filled, view[self.end :]]

    def whole(self) -> bytes:
        return b"".join(self.pieces())


def fill_region_bytes(data: bytes, nonce: str, body: str, last_body: str) -> Spliced | None:
    """`fill_region` on the encoded document, for the common case only: the region holds
    exactly `last_body` (nothing typed in it, no older copy saved over it) and the document
    uses LF line breaks. Only the region's bytes are built; the rest is copied as it is, never
    decoded or encoded. None when the general path is needed (or the region is gone)."""
    if b"\r" in data:
        return None
    start = data.find(START.format(nonce=nonce).encode())
    if start < 0:
        return None
    content_start = data.find(b"\n", start)
    if content_start < 0:
        return None
    content_start += 1
    written = _region_text(last_body, "\n").encode("utf-8")
    if not data.startswith(written, content_start):
        return None
    tail = _end_marker_bytes(nonce).match(data, content_start + len(written))
    if tail is None:
        return None
    version = tail.group(1)
    if version != _version(last_body).encode() and not (version is None and not last_body):
        return None  # the marker names another write: a copy an editor saved, to be merged
    marker = _END_WRITTEN.format(nonce=nonce, version=_version(body)).encode()
    filled = _region_text(body, "\n").encode("utf-8") + marker
    return Spliced(data, content_start, tail.end(), filled)


def _end_marker_bytes(nonce: str) -> re.Pattern[bytes]:
    return re.compile(
        re.escape(f"<!-- agentdoc:end {nonce}".encode()) + rb"(?: ([0-9a-f]{8}))? -->"
    )


def close_region(
    text: str,
    nonce: str,
    body: str,
    last_body: str,
    earlier: Sequence[str] = (),
    *,
    next_prompt: bool = True,
) -> str | None:
    """Replace the whole region (markers included) with the final body and a fresh prompt.

    Only the marker comments themselves are removed: anything the user typed on a marker's line
    stays, before the reply (start line) or after it (end line). Without `next_prompt` (a
    failure notice that leaves the prompt pending) no ``## User`` heading is added.
    """
    region = find_region(text, nonce)
    if region is None:
        return None
    nl = newline_of(text)
    base = _written_as(region, last_body, earlier)
    merged = _merge_region(text, region, body.rstrip("\r\n"), base)
    lead = _typed_on_line(
        text[region.start + len(START.format(nonce=nonce)) : region.content_start]
    )
    after = _typed_on_line(text[region.marker_end : region.end]) + text[region.end :]
    if not next_prompt and not after.strip():
        closing = after
    elif _USER_HEADING.match(after.lstrip("\r\n")) or not next_prompt:
        # The user already opened the next prompt below the reply: don't add another heading.
        closing = after if after.startswith(("\n", "\r\n")) else nl + after
    else:
        closing = f"{nl}## User{nl}{nl}{after}"
    return text[: region.start] + lead + merged + closing


def typed_below(text: str, nonce: str) -> bool:
    """Whether the user typed text right below the open region without a ``## User`` heading
    of their own: closing the region puts the fresh heading above it, so it reads as a prompt
    that the user never submitted."""
    region = find_region(text, nonce)
    if region is None:
        return False
    after = _typed_on_line(text[region.marker_end : region.end]) + text[region.end :]
    if not after.strip() or _USER_HEADING.match(after.lstrip("\r\n")):
        return False
    return not any(role == "user" for _line, role in turn_headings(after))


@dataclass(frozen=True)
class ReplyMarkers:
    """The two markers of one streaming reply, known by their nonce: the reply is opened,
    found, filled and closed through them in whatever the document has become."""

    nonce: str = field(default_factory=new_nonce)

    def open(self, text: str, insert_at: int) -> str:
        return open_reply(text, insert_at, self.nonce)

    def find(self, text: str) -> Region | None:
        return find_region(text, self.nonce)

    def fill(self, text: str, body: str, last_body: str, earlier: Sequence[str] = ()) -> str | None:
        return fill_region(text, self.nonce, body, last_body, earlier)

    def fill_bytes(self, data: bytes, body: str, last_body: str) -> Spliced | None:
        return fill_region_bytes(data, self.nonce, body, last_body)

    def close(
        self,
        text: str,
        body: str,
        last_body: str,
        earlier: Sequence[str] = (),
        *,
        next_prompt: bool = True,
    ) -> str | None:
        return close_region(text, self.nonce, body, last_body, earlier, next_prompt=next_prompt)

    def typed_below(self, text: str) -> bool:
        return typed_below(text, self.nonce)


def _written_as(region: Region, last_body: str, earlier: Sequence[str]) -> str:
    """The body of ours that the region on disk was made from, as far as we can tell."""
    # The empty region `open_reply` writes names no write: its body is "".
    version = region.version or _version("")
    for body in (last_body, *reversed(earlier)):
        if _version(body) == version:
            return body
    return last_body


def _merge_region(text: str, region: Region, body: str, base: str) -> str:
    current = text[region.content_start : region.content_end]
    nl = newline_of(text)
    return merge_text(_region_text(base, nl), _region_text(body, nl), current)


def _region_text(body: str, nl: str) -> str:
    body = with_newlines(body, nl)
    return body if not body or body.endswith(nl) else body + nl


def _typed_on_line(rest: str) -> str:
    """What the user typed after a marker on its line; empty if only the line break is there."""
    return "" if rest in ("", "\n", "\r\n") else rest


# --- merging ----------------------------------------------------------------------------------
