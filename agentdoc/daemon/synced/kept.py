"""Where merged conflict copies are kept, and which there are (`agentdoc status` lists them).

Apart from the merge itself so that `status` loads neither the parser nor the merge.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.document import conflict_original
from agentdoc.localstate import state_folders
from agentdoc.records import state_dir


def kept_dir(document: Path) -> Path:
    """Where the conflict copies merged into documents of this folder are kept."""
    return state_dir(document) / "conflicts"


def kept_copies(target: Path) -> list[Path]:
    """The merged conflict copies kept for the document `target`, or for a folder tree."""
    if target.is_file():
        kept = kept_dir(target)
        found = kept.glob("*") if kept.is_dir() else iter(())
        return sorted(p for p in found if conflict_original(p.name) == target.name)
    return sorted(
        copy for _folder, state in state_folders(target) for copy in state.glob("conflicts/*")
    )
