"""rclone (`bisync`, `sync`): no marker, `.conflictN` copies, a filters file named on its
command line."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="rclone",
    title="rclone",
    conflicts=(
        # bisync: chat.conflict1.md (extension kept) or chat.md.conflict2
        r"(?P<stem>.+?)\.conflict\d+(?P<ext>\.[^.]*)?",
        r"(?P<stem>.+?)(?P<ext>\.[^.]+)\.conflict\d+",
        # bisync before 1.66: chat.md..path1
        r"(?P<stem>.+?)(?P<ext>\.[^.]+)\.\.path[12]",
    ),
    # Its filter rules (`- GLOB` excludes; `**` is everything below, at any depth), read only
    # from a file named on its command line.
    ignore_file=".agentdoc.rclone-filters",
    ignore_lines=("- .agentdoc/**", "- .agentdoc-tmp-*"),
    afterwards="pass `--filters-file {file}` to `rclone bisync` (run it once with `--resync` "
    "after the filters change) or `--filter-from {file}` to `rclone sync`",
)
