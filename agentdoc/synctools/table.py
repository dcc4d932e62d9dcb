"""The sync tools agentdoc knows, in one table, and the views of it each reader takes.

Adding a tool is a module beside this one (its `SyncTool`) and a row in `ALL_TOOLS`; the
markers, by-products and `init-sync` entries below follow from the table. The order of the rows
is the order their markers and conflict patterns are tried in.
"""

from __future__ import annotations

from agentdoc.synctools import (
    cloudstorage,
    dropbox,
    git,
    icloud,
    nextcloud,
    rclone,
    resilio,
    syncthing,
    unison,
)
from agentdoc.synctools.tool import Kind, SyncTool

ALL_TOOLS: tuple[SyncTool, ...] = (
    syncthing.TOOL,
    nextcloud.TOOL,
    dropbox.TOOL,
    icloud.TOOL,
    cloudstorage.TOOL,
    rclone.TOOL,
    unison.TOOL,
    resilio.TOOL,
    git.TOOL,
)
TOOLS: dict[str, SyncTool] = {tool.name: tool for tool in ALL_TOOLS}

# A marker's name in a sync root -> the tool that leaves it there.
MARKERS: tuple[tuple[str, str], ...] = tuple(
    (marker, tool.name) for tool in ALL_TOOLS for marker in tool.markers
)
# A journal file's name prefix (`PREFIX*.db`) -> the tool that keeps it in a sync root.
JOURNALS: tuple[tuple[str, str], ...] = tuple(
    (prefix, tool.name) for tool in ALL_TOOLS for prefix in tool.journals
)
# A folder under the home folder -> the tool that syncs each folder in it.
HOME_STORAGE: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    (tool.home_storage, tool.name) for tool in ALL_TOOLS if tool.home_storage
)
# Folders that only ever hold a sync tool's own files (old versions, caches, markers).
BYPRODUCT_DIRS: frozenset[str] = frozenset(d for tool in ALL_TOOLS for d in tool.byproduct_dirs)
# Conflict copies' patterns, each once (tools that name copies alike share one).
CONFLICT_PATTERNS: tuple[str, ...] = tuple(
    dict.fromkeys(pattern for tool in ALL_TOOLS for pattern in tool.conflicts)
)
# The tools' other files (shell patterns) and what each is.
OTHER_BYPRODUCTS: tuple[tuple[str, Kind], ...] = tuple(
    other for tool in ALL_TOOLS for other in tool.others
)
# The tools `init-sync --tool` takes.
INIT_SYNC_TOOLS: tuple[str, ...] = tuple(tool.name for tool in ALL_TOOLS if tool.init_sync)
