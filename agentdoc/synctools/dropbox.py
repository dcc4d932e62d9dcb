"""Dropbox: a `.dropbox.cache` folder (and `.dropbox` file), conflicted copies, no ignore file."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="dropbox",
    title="Dropbox",
    markers=(".dropbox.cache", ".dropbox"),  # its cache, and the file it keeps beside it
    byproduct_dirs=(".dropbox.cache",),
    conflicts=(
        # chat (Ann's conflicted copy 2026-11-25).md, chat (Conflicted copy ann 2026…) (1).md;
        # Obsidian Sync names its copies the same way.
        r"(?P<stem>.+?) \([^()]*conflicted copy[^()]*(?:\(\d+\))?\)(?: \(\d+\))?(?P<ext>\.[^.]*)?",
    ),
    by_hand="Dropbox has no ignore file: run `attr -s com.dropbox.ignored -V 1 DIR/.agentdoc` "
    "(Linux) or `xattr -w com.dropbox.ignored 1 DIR/.agentdoc` (macOS) for each folder",
)
