"""Syncthing (syncthing.net): a `.stfolder` marker, `.sync-conflict-` copies, `.stignore`."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="syncthing",
    title="Syncthing",
    markers=(".stfolder",),  # a folder since 1.x, a file in older releases
    byproduct_dirs=(".stversions", ".stfolder"),  # old versions, the marker
    conflicts=(
        # chat.sync-conflict-20261125-123404-ASALHUV.md
        r"(?P<stem>.+?)\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}(?P<ext>\.[^.]*)?",
    ),
    others=(
        (".syncthing.*.tmp", "temporary"),  # a download in progress
        ("~syncthing~*.tmp", "temporary"),  # the same on Windows-safe file systems
    ),
    ignore_file=".stignore",
    ignore_lines=(".agentdoc", ".agentdoc-tmp-*"),
)
