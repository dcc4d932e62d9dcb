"""`agentdoc init-sync`: keep agentdoc's local state out of the sync.

`.agentdoc/` holds this machine's status, journal, lock and warm-process state; on another
machine it would be wrong (a lock held by a pid that is not there, a status of a turn that runs
elsewhere). agentdoc keeps it out of a synced folder by itself (`agentdoc.localstate`); the
entries here also keep out a `.agentdoc/` an older agentdoc on another device still writes, and
the temporary files of agentdoc's atomic writes, which are in the tree for a moment. Claims
(`.agentdoc-claims/`) are meant to travel and stay in. The ignore file each tool reads is a
table; a tool without one gets the command that does it.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.synced import synced_folder
from agentdoc.errors import AgentdocError

HEADER = "# agentdoc: this machine's own state (agentdoc init-sync)"
# tool -> (its ignore file in the synced root, the lines that keep agentdoc's state out)
IGNORE_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "syncthing": (".stignore", (".agentdoc", ".agentdoc-tmp-*")),
    "nextcloud": (".sync-exclude.lst", (".agentdoc/", ".agentdoc-tmp-*")),
    "git": (".gitignore", (".agentdoc/", ".agentdoc-tmp-*")),
}
BY_HAND = {
    "dropbox": "Dropbox has no ignore file: run `attr -s com.dropbox.ignored -V 1 DIR/.agentdoc` "
    "(Linux) or `xattr -w com.dropbox.ignored 1 DIR/.agentdoc` (macOS) for each folder",
}


def find_tool(folder: Path, settings: Settings) -> tuple[str, Path]:
    """The sync tool of `folder` and the root its ignore file belongs in."""
    found = synced_folder(folder, settings)
    if found is not None and found.tool is not None:
        return found.tool, found.root
    for top in (folder.resolve(), *folder.resolve().parents):
        if (top / ".git").exists():
            return "git", top
    raise AgentdocError(
        f"no sync tool found at or above {folder}: init-sync knows Syncthing (.stfolder), "
        "Nextcloud (.sync_*.db) and git (.git); name one with --tool"
    )


def missing_lines(existing: str, wanted: tuple[str, ...]) -> list[str]:
    have = {line.strip() for line in existing.splitlines()}
    return [line for line in wanted if line not in have]


def init_sync(folder: Path, settings: Settings, tool: str | None = None) -> tuple[Path, list[str]]:
    """Add the ignore entries the tool needs; the file and the lines added (none if present)."""
    root = folder.resolve()
    if tool is None:
        tool, root = find_tool(folder, settings)
    if tool in BY_HAND:
        raise AgentdocError(BY_HAND[tool])
    if tool not in IGNORE_FILES:
        known = ", ".join(sorted(IGNORE_FILES))
        raise AgentdocError(f"{tool} has no ignore file agentdoc knows (known: {known})")
    name, wanted = IGNORE_FILES[tool]
    path = root / name
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        added = missing_lines(existing, wanted)
        if added:
            gap = "" if not existing or existing.endswith("\n") else "\n"
            block = "\n".join([HEADER, *added]) + "\n"
            path.write_text(existing + gap + block, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AgentdocError(
            f"cannot update {path}: it is not UTF-8 text (byte {exc.start} is not), as {tool} "
            "reads it; it was left as it is: fix it, or add these lines yourself: "
            + ", ".join(wanted)
        ) from exc
    except OSError as exc:
        raise AgentdocError(
            f"cannot update {path}: {exc.strerror or exc}; it was left as it is: add these "
            "lines yourself: " + ", ".join(wanted)
        ) from exc
    return path, added
