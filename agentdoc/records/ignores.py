"""What the user's git ignores in a folder a snapshot records, besides its own .gitignore files.

The shadow repository lists a folder with ``ls-files --exclude-standard``, which reads the
folder's .gitignore files but not what its own repository ignores elsewhere: the repository's
``info/exclude``, or, for a folder inside a repository, the .gitignore files above it. Those are
handed to git as a file of patterns (``--exclude-from``).
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def user_excludes(folder: Path, inherited: Path) -> list[str]:
    """What the user's git ignores besides the folder's own .gitignore files: its repository's
    ``info/exclude``, or, in a folder inside a repository, the patterns above it that mean the
    same below it (written to ``inherited``)."""
    own = folder / ".git" / "info" / "exclude"
    if own.is_file():
        return [f"--exclude-from={own}"]
    patterns = inherited_patterns(folder)
    if not patterns:
        return []
    text = "".join(f"{p}\n" for p in patterns)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if inherited.read_text(encoding="utf-8") == text:
            return [f"--exclude-from={inherited}"]
    try:
        inherited.write_text(text, encoding="utf-8")
    except OSError:
        return []
    return [f"--exclude-from={inherited}"]


def inherited_patterns(folder: Path) -> list[str]:
    """The ignore patterns of the repository ``folder`` is inside (its ``info/exclude``, the
    .gitignore files above ``folder``) that match at any depth (no slash but a trailing one):
    those mean the same with ``folder`` as the root. Anchored ones are left out."""
    above = list(folder.parents)
    root = next((p for p in above if (p / ".git").exists()), None)
    if root is None:
        return []
    sources = [root / ".git" / "info" / "exclude"]
    sources += [p / ".gitignore" for p in reversed(above[: above.index(root) + 1])]
    found = []
    for source in sources:
        try:
            lines = source.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in (raw.strip() for raw in lines):
            if line and not line.startswith("#") and "/" not in line.lstrip("!").rstrip("/"):
                found.append(line)
    return found
