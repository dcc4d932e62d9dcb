"""iCloud Drive: the folders under ~/Library/Mobile Documents, and `.icloud` placeholders."""

from agentdoc.synctools.tool import SyncTool

TOOL = SyncTool(
    name="icloud",
    title="iCloud Drive",
    home_storage=("Library", "Mobile Documents"),
    others=(("*.icloud", "placeholder"),),  # its stand-in for a file not downloaded yet
)
