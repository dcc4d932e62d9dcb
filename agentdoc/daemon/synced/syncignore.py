"""`agentdoc init-sync`: keep agentdoc's local state out of the sync.

`.agentdoc/` holds this machine's status, journal, lock and warm-process state; on another
machine it would be wrong (a lock held by a pid that is not there, a status of a turn that runs
elsewhere). agentdoc keeps it out of a synced folder by itself (`agentdoc.localstate`); the
entries here also keep out a `.agentdoc/` an older agentdoc on another device still writes, and
the temporary files of agentdoc's atomic writes, which are in the tree for a moment. Claims
(`.agentdoc-claims/`) are meant to travel and stay in. The ignore file each tool reads is in
its row of the sync tools' table (`agentdoc.synctools`); a tool without one gets the command
that does it. rclone reads its filters only from a
file named on its command line, and unison only from its profile (outside the folder), so for
those the file is written or the lines are shown, with how to use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.synced.pace import synced_folder
from agentdoc.errors import AgentdocError
from agentdoc.synctools import ALL_TOOLS, TOOLS

HEADER = "# agentdoc: this machine's own state (agentdoc init-sync)"


def find_tool(folder: Path, settings: Settings) -> tuple[str, Path]:
    """The sync tool of `folder` and the root its ignore file belongs in."""
    found = synced_folder(folder, settings)
    if found is not None and found.tool is not None:
        return found.tool, found.root
    for top in (folder.resolve(), *folder.resolve().parents):
        for tool in ALL_TOOLS:
            if tool.init_marker is not None and (top / tool.init_marker).exists():
                return tool.name, top
    raise AgentdocError(f"no sync tool found at or above {folder}: {_findable()}")


def _findable() -> str:
    """Which tools init-sync finds by themselves, and how to name the others."""
    found, named = [], []
    for tool in ALL_TOOLS:
        if not tool.init_sync:
            continue
        if tool.ignore_file is not None and tool.mark is not None:
            found.append(f"{tool.title} ({tool.mark})")
        else:
            named.append(f"--tool {tool.name}")
    return (
        f"init-sync finds {', '.join(found[:-1])} and {found[-1]}; name another with "
        f"{', '.join(named[:-1])} or {named[-1]}"
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
    entry = TOOLS.get(tool)
    if entry is not None and entry.by_hand is not None:
        raise AgentdocError(entry.by_hand)
    todo: list[str] = []
    if entry is not None and entry.unmarked and synced_folder(root, settings) is None:
        todo.append(
            f"{tool} leaves no mark in the folder: add it to your config "
            f'(synced = ["{root}"]) so agentdoc treats it as synced'
        )
    if entry is not None and entry.profile is not None:
        lines = entry.ignore_lines
        return InitSync(None, [], [f"add to {entry.profile}: " + "; ".join(lines), *todo])
    if entry is None or entry.ignore_file is None:
        known = ", ".join(sorted(t.name for t in ALL_TOOLS if t.ignore_file is not None))
        raise AgentdocError(f"{tool} has no ignore file agentdoc knows (known: {known})")
    wanted = entry.ignore_lines
    path = root / entry.ignore_file
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
    if entry.afterwards is not None:
        todo.insert(0, entry.afterwards.format(file=path))
    return InitSync(path, added, todo)
