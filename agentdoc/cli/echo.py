"""The reply's text on stdout, as it streams (`agentdoc run FILE | cat`).

A pipe only takes appends, but the markdown that goes into the document is not append-only
while it streams: the line being written may still become an escaped turn heading (a setext
underline arrives on the next line), an open code fence is closed provisionally, a tool block
says "running…" until its result comes, and a retry notice comes and goes. So the echo writes
only the part of the reply that can no longer change (`settled_text`), and the rest when the
turn ends. What reaches stdout is then exactly the reply as written into the document: its text
and tool blocks, without the region markers, the footer, the error callout or the thinking.
"""

from __future__ import annotations

import threading
from typing import TextIO

from agentdoc.agents import Reply, TextPart, ToolPart
from agentdoc.document import escape_reply, render_body, render_tool, seal_reply
from agentdoc.turn import Progress

_SEPARATOR = "\n\n"  # how render_body joins the reply's parts


def settled_text(reply: Reply) -> str:
    """The longest start of the final reply body that later stream events cannot change."""
    chunks: list[str] = []
    last = len(reply.parts) - 1
    for i, part in enumerate(reply.parts):
        if isinstance(part, ToolPart):
            if part.result is None:
                break  # its block still changes when the result arrives
            chunks.append(render_tool(part))
        elif i < last:
            if part.text.strip():
                chunks.append(seal_reply(part.text))
        else:
            # The streaming part: its separator is settled only once it has settled text (a
            # part that stays blank is left out of the document, separator and all).
            partial = _settled_lines(part)
            if partial.strip():
                chunks.append(partial)
            break
    return _SEPARATOR.join(chunks)


def _settled_lines(part: TextPart) -> str:
    """The escaped lines of a streaming text part, except the last two.

    The last (unfinished) line may grow into a heading, and the one before it may become a
    setext heading when its underline arrives, so both are held back until more text comes.
    """
    lines = part.text.splitlines(keepends=True)
    complete = [line for line in lines if line.endswith(("\n", "\r"))]
    keep = max(len(complete) - 1, 0)
    return escape_reply("".join(lines[:keep]))


class ReplyEcho:
    """A progress callback that appends each turn's settled reply text to `out`."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._written = ""
        self._lock = threading.Lock()

    def __call__(self, p: Progress) -> None:
        if p.reply is None:
            return
        with self._lock:
            final = p.state in ("done", "failed", "interrupted", "cancelled")
            text = render_body(p.reply, final=True) if final else settled_text(p.reply)
            self._append(text)
            if final:
                if self._written and not self._written.endswith("\n"):
                    self.out.write("\n")
                self._written = ""
            self.out.flush()

    def _append(self, text: str) -> None:
        if not text.startswith(self._written):
            # The CLI abandoned a partial reply and started again (a retried request): what
            # was written cannot be taken back, so the new reply starts on a fresh line.
            self.out.write("\n")
            self._written = ""
        self.out.write(text[len(self._written) :])
        self._written = text
