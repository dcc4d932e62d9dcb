"""What goes on the CLI's stdin for a turn: the prompt text, and its pictures as image blocks.

The CLI expands ``@path`` mentions itself (Claude Code 2.1.197, in ``-p`` text and in
stream-json string content): any path, inside the working folder or not, including
``@../secret`` and ``@/etc/hostname``. agentdoc resolves includes itself, under its own rules,
so every token the CLI would take for a mention is neutralised before it is sent: a WORD JOINER
(U+2060, invisible, not whitespace) goes before the ``@``. The CLI's pattern is
``(^|[\\s。、？！])@…``; whatever it reads before the ``@`` is then no longer a match. The text
of included files and of earlier turns is neutralised the same way, so no part of the prompt
can bring in a file agentdoc did not check. A leading ``/`` (a command of the CLI's own) is
neutralised as for every agent (:func:`~agentdoc.agents.base.neutralise_command`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentdoc.agents.base.prompt import WORD_JOINER, ImagePart, neutralise_command

# A superset of what the CLI's JavaScript `\s` and its CJK punctuation accept before a mention.
_MENTION = re.compile(r"(?<![^\s\ufeff\u3002\u3001\uff1f\uff01])@")


def neutralise(text: str) -> str:
    """``text`` with every ``@`` the CLI would read as a mention, and a leading ``/`` it would
    read as a command, made inert."""
    return neutralise_command(_MENTION.sub(WORD_JOINER + "@", text))


def user_content(prompt: str, images: tuple[ImagePart, ...] = ()) -> str | list[dict[str, Any]]:
    """The ``content`` of a stream-json user message: a string, or text plus image blocks."""
    text = neutralise(prompt)
    if not images:
        return text
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    blocks.extend(
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.base64()},
        }
        for image in images
    )
    return blocks


def user_message(
    prompt: str, message_id: str | None = None, images: tuple[ImagePart, ...] = ()
) -> bytes:
    """One stream-json input line carrying a user message."""
    content = user_content(prompt, images)
    message: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": content}}
    if message_id:
        message["uuid"] = message_id  # the session records the prompt under this id
    return (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
