"""How the command line names a document: by its path under the folder it was given.

A module of its own, light to import: `agentdoc status` needs it without the live view's turn
machinery.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentdoc.document import shown_name


def document_name(path: Path, roots: Sequence[Path] = ()) -> str:
    """How a line names a document: its path under the watched root that holds it (three
    `chat.md` in different folders must be told apart), else its file name."""
    for root in sorted(roots, key=lambda r: -len(str(r))):
        for under, top in ((path.absolute(), root.absolute()), (path.resolve(), root.resolve())):
            if under.is_relative_to(top) and under != top:
                return "/".join(shown_name(part) for part in under.relative_to(top).parts)
    return shown_name(path.name)
