"""The sync tools agentdoc knows (Syncthing, Nextcloud, Dropbox, iCloud, rclone, …), as data.

One `SyncTool` record per tool, each in its own module (after pre-commit's `languages/`), and
one table of them (`ALL_TOOLS`, `TOOLS` by name) with the views its readers take: how a synced
folder is found (`agentdoc.syncmarks`), the files a tool leaves beside a document
(`agentdoc.document.byproducts`), and what `agentdoc init-sync` writes (the daemon's
`synced/syncignore.py`, and the command's `--tool` choice). Below every package: pure data,
no I/O. A new tool is one module and one row in `table.py`.
"""

from agentdoc.synctools.table import (
    ALL_TOOLS,
    BYPRODUCT_DIRS,
    CONFLICT_PATTERNS,
    HOME_STORAGE,
    INIT_SYNC_TOOLS,
    JOURNALS,
    MARKERS,
    OTHER_BYPRODUCTS,
    TOOLS,
)
from agentdoc.synctools.tool import Kind

__all__ = [
    "ALL_TOOLS",
    "BYPRODUCT_DIRS",
    "CONFLICT_PATTERNS",
    "HOME_STORAGE",
    "INIT_SYNC_TOOLS",
    "JOURNALS",
    "MARKERS",
    "OTHER_BYPRODUCTS",
    "TOOLS",
    "Kind",
]
