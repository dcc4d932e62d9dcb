"""Sample content for documents: markdown blocks of every kind, a picture."""

from __future__ import annotations

from pathlib import Path

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def titled(title: str, prompt: str = "") -> str:
    """A conversation with a title of its own, `prompt` pending under its `## User`."""
    return f"---\ntitle: {title}\nagentdoc: {{}}\n---\n\n# {title}\n\n## User\n\n{prompt}"


BLOCKS = [
    "## User\n",
    "## Assistant\n",
    "  ## User\n",
    "   ## Assistant ##\n",
    "    ## User\n",
    "## User #\n",
    "##\tUser\n",
    "## Users\n",
    "\n",
    "\n\n",
    "Some text\n",
    "more text with `code`\n",
    "```\n",
    "~~~python\n",
    "````\n",
    "    indented code\n",
    "<!-- a comment\n",
    "-->\n",
    "<div>\n",
    "</div>\n",
    "<pre>\n",
    "</pre>\n",
    "<?php\n",
    "?>\n",
    "- item\n",
    "  - nested\n",
    "1. first\n",
    "2) second\n",
    "> quoted\n",
    "> ## User\n",
    ">\n",
    "- ## User\n",
    "  ## User\n",
    "Title\n",
    "===\n",
    "---\n",
    "***\n",
    "[ref]: /url\n",
    '"title\n',
    "<https://x.y>\n",
    "\\## User\n",
    "* > ```\n",
]


def chat_in(folder: Path, text: str) -> Path:
    """`folder`/chat.md holding `text`, the folder made first if need be."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "chat.md"
    path.write_text(text)
    return path
