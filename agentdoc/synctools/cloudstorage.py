"""macOS's File Provider folders (Dropbox, Google Drive, OneDrive, Box, …):
~/Library/CloudStorage/NAME."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="cloudstorage",
    title="a cloud storage provider",
    home_storage=("Library", "CloudStorage"),
)
