"""Resilio Sync: its `.sync` folder (its Archive holds old versions)."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="resilio",
    title="Resilio Sync",
    byproduct_dirs=(".sync",),
)
