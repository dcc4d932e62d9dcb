"""git as a sync (`git: sync`): found by `init-sync` through `.git`, its rules in `.gitignore`.

A repository is not a synced folder (its documents' writes are not paced, no trust is asked):
the daemon's git guard and background fetch handle what a checkout or pull brings.
"""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="git",
    title="git",
    init_marker=".git",
    ignore_file=".gitignore",
    ignore_lines=(".agentdoc/", ".agentdoc-tmp-*"),
)
