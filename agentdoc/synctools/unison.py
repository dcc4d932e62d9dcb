"""Unison: no marker, its ignore rules in its profile (outside the folder)."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="unison",
    title="Unison",
    ignore_lines=("ignore = Name .agentdoc", "ignore = Name .agentdoc-tmp-*"),
    profile="the unison profile that syncs this folder (~/.unison/NAME.prf)",
)
