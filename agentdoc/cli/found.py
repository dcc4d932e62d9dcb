"""How `agentdoc search` shows its hits: text lines, JSON lines, or vimgrep lines.

A path is written as the bytes the system uses (relative to the current folder when it is
inside it), so a file name that is not UTF-8 can be opened from the output as it is.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Literal

import click

from agentdoc.search import Hit

Shape = Literal["text", "json", "vimgrep"]


def shown_path(path: bytes) -> bytes:
    here = os.fsencode(os.getcwd())
    return os.path.relpath(path, here) if path.startswith(here + b"/") else path


def line_of(hit: Hit, shape: Shape) -> bytes:
    path = shown_path(hit.path)
    text = hit.text.encode("utf-8", "replace")
    # Turn 0 is the title and introduction, before any turn: no anchor to point at.
    turn = b"turn-%d" % hit.turn if hit.turn else b""
    if shape == "vimgrep":
        return b"%s:%d:1:%s%s" % (path, hit.line, turn + b": " if turn else b"", text)
    if shape == "json":
        record = {
            # Not UTF-8: the name's bytes come back with os.fsencode (\udcXX escapes).
            "path": os.fsdecode(path),
            "document": os.fsdecode(shown_path(hit.document)),
            "kind": hit.kind,
            "turn": hit.turn,
            "line": hit.line,
            "text": hit.text,
        }
        return json.dumps(record).encode("ascii")
    return b"%s%s: %s" % (path, b"#" + turn if turn else b"", text)


def show_hits(hits: Sequence[Hit], shape: Shape) -> None:
    """Print the hits; with none, say so on stderr (the exit code says it to scripts)."""
    out = sys.stdout.buffer
    for hit in hits:
        out.write(line_of(hit, shape) + b"\n")
    out.flush()
    if not hits and shape == "text":
        click.echo("no matches", err=True)
