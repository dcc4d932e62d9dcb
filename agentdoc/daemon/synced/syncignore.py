"""`agentdoc init-sync`: keep agentdoc's local state out of the sync.

`.agentdoc/` holds this machine's status, journal, lock and warm-process state; on another
machine it would be wrong (a lock held by a pid that is not there, a status of a turn that runs
elsewhere). agentdoc keeps it out of a synced folder by itself (`agentdoc.localstate`); the
entries here also keep out a `.agentdoc/` an older agentdoc on another device still writes, and
the temporary files of agentdoc's atomic writes, which are in the tree for a moment. Claims
(`.agentdoc-claims/`) are meant to travel and stay in. The ignore file each tool reads is a
table; a tool without one gets the command that does it. rclone reads its filters only from a
file named on its command line, and unison only from its profile (outside the folder), so for
those the file is written or the lines are shown, with how to use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.synced.pace import synced_folder
from agentdoc.errors import AgentdocError

HEADER = "# agentdoc: this machine's own state (agentdoc init-sync)"
# tool -> (its ignore file in the synced root, the lines that keep agentdoc's state out)
IGNORE_FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "syncthing": (".stignore", (".agentdoc", ".agentdoc-tmp-*")),
    "nextcloud": (".sync-exclude.lst", (".agentdoc/", ".agentdoc-tmp-*")),
    "git": (".gitignore", (".agentdoc/", ".agentdoc-tmp-*")),
    # rclone's filter rules (`- GLOB` excludes; `**` is everything below, at any depth)
    "rclone": (".agentdoc.rclone-filters", ("- .agentdoc/**", "- .agentdoc-tmp-*")),
}
# What a tool needs besides the file: {file} is the file written.
AFTERWARDS = {
    "rclone": "pass `--filters-file {file}` to `rclone bisync` (run it once with `--resync` "
    "after the filters change) or `--filter-from {file}` to `rclone sync`",
}
# Tools that keep their ignore rules outside the folder: the lines to add, and where.
PROFILE_LINES = {
    "unison": (
        ("ignore = Name .agentdoc", "ignore = Name .agentdoc-tmp-*"),
        "the unison profile that syncs this folder (~/.unison/NAME.prf)",
    ),
}
# Tools that leave no marker in the folder: without the config's `synced` list agentdoc would
# not know the folder is synced (no pacing of writes, no trust needed).
UNMARKED = frozenset({"rclone", "unison"})
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
        f"no sync tool found at or above {folder}: init-sync finds Syncthing (.stfolder), "
        "Nextcloud (.sync_*.db) and git (.git); name another with --tool rclone, "
        "--tool unison or --tool dropbox"
    )


def missing_lines(existing: str, wanted: tuple[str, ...]) -> list[str]:
    have = {line.strip() for line in existing.splitlines()}
    return [line for line in wanted if line not in have]


@dataclass(frozen=True)
class InitSync:
    """What `init-sync` did: the file and the lines added (none if present, no file if the
    tool keeps its rules elsewhere), and what the person still has to do."""

    file: Path | None
    added: list[str]
    todo: list[str]


def init_sync(folder: Path, settings: Settings, tool: str | None = None) -> InitSync:
    """Add the ignore entries the tool needs, or say where they go."""
    root = folder.resolve()
    if tool is None:
        tool, root = find_tool(folder, settings)
    if tool in BY_HAND:
        raise AgentdocError(BY_HAND[tool])
    todo: list[str] = []
    if tool in UNMARKED and synced_folder(root, settings) is None:
        todo.append(
            f"{tool} leaves no mark in the folder: add it to your config "
            f'(synced = ["{root}"]) so agentdoc treats it as synced'
        )
    if tool in PROFILE_LINES:
        lines, where = PROFILE_LINES[tool]
        return InitSync(None, [], [f"add to {where}: " + "; ".join(lines), *todo])
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
    if tool in AFTERWARDS:
        todo.insert(0, AFTERWARDS[tool].format(file=path))
    return InitSync(path, added, todo)
