"""What a turn sends besides its text: the pictures a prompt names, read and checked by agentdoc;
and the one thing every agent's prompt text needs: no command of the agent's own at its start.

Each protocol renders pictures its own way (Claude: an ``image`` content block in a stream-json
user message; ACP: an ``image`` content block with ``mimeType`` and ``data``).

Every agent takes a prompt whose text begins with ``/`` (after blanks) as one of its own
commands: the Claude CLI (its built-ins and the working folder's ``.claude/commands/*.md``),
Gemini CLI, codex-acp and OpenCode (ACP's advertised commands). Such a command runs outside the
turn's approval flow (Gemini's ``/init`` writes GEMINI.md without asking; a project's Claude
command may run shell lines) or swallows the prompt (OpenCode answers ``/etc/hosts is odd``
with nothing). A document's grammar has no such commands, so the text is neutralised: a WORD
JOINER (U+2060, invisible, not whitespace, kept by every agent's trim) goes before that ``/``.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Literal

WORD_JOINER = "\u2060"
# JavaScript's trim also drops a BOM, which Python's \s does not cover.
_COMMAND = re.compile(r"\A([\s\ufeff]*)/")


def neutralise_command(text: str) -> str:
    """``text`` with a leading ``/`` no longer read as the agent's command."""
    return _COMMAND.sub(lambda found: found.group(1) + WORD_JOINER + "/", text, count=1)


# An `@` at a word's start, as Claude Code reads a file mention (after whitespace or CJK
# punctuation): agents built on it over ACP (the Claude adapter) read the file unasked.
_MENTION = re.compile(r"(?<![^\s\ufeff\u3002\u3001\uff1f\uff01])@")


def neutralise_mentions(text: str) -> str:
    """``text`` with every ``@`` an agent could take for a file mention made inert (a WORD
    JOINER before it): only the includes agentdoc checked bring files in."""
    return _MENTION.sub(WORD_JOINER + "@", text)


ImageType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]


@dataclass(frozen=True, slots=True)
class ImagePart:
    """One local picture, exactly as read from disk."""

    path: str  # as the prompt named it, for messages and the text that stands in for it
    media_type: ImageType
    data: bytes

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")
