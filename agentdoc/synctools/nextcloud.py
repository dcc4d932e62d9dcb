"""Nextcloud's and ownCloud's desktop clients: a `.sync_*.db` journal, conflicted copies, and
`.sync-exclude.lst`."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="nextcloud",
    title="Nextcloud",
    # Their journal, in the root of each synced folder (`._sync_<hash>.db` in older releases).
    journals=(".sync_", "._sync_"),
    conflicts=(
        # chat (conflicted copy 2026-11-25 123404).md, as Dropbox names them
        r"(?P<stem>.+?) \([^()]*conflicted copy[^()]*(?:\(\d+\))?\)(?: \(\d+\))?(?P<ext>\.[^.]*)?",
        # ownCloud and older Nextcloud clients: chat_conflict-20261125-123404.md
        r"(?P<stem>.+?)_conflict-\d{8}-\d{6}(?P<ext>\.[^.]*)?",
    ),
    ignore_file=".sync-exclude.lst",
    ignore_lines=(".agentdoc/", ".agentdoc-tmp-*"),
)
