"""Shell completion of document paths: markdown files, and folders to go into.

click completes the commands and options by itself; this narrows path arguments to what they
take, so `agentdoc run no<Tab>` offers `notes/` and `notes.md`, not `notes.pdf`.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.shell_completion import CompletionItem

MARKDOWN_SUFFIXES = (".md", ".markdown")


def document_candidates(incomplete: str) -> list[CompletionItem]:
    folder, sep, start = incomplete.rpartition(os.sep)
    base = Path(folder + sep if sep else ".")
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    items: list[CompletionItem] = []
    for entry in entries:
        name = entry.name
        # Hidden entries (.agentdoc/, .git/) only when asked for with a leading dot.
        if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
            continue
        shown = f"{folder}{sep}{name}"
        if entry.is_dir():
            items.append(CompletionItem(shown + os.sep))
        elif name.endswith(MARKDOWN_SUFFIXES) and not name.endswith(".thinking.md"):
            items.append(CompletionItem(shown))
    return items
