"""Whether a folder is synced, for the daemon: it paces its writes there and merges what
arrives, as a synced folder changes under it at any moment (a phone's save arrives seconds later,
with an old mtime) and may hold the sync tool's by-products. The markers themselves are told
apart in `agentdoc.syncmarks`.
"""

from __future__ import annotations

from pathlib import Path

from agentdoc.config import Settings
from agentdoc.syncmarks import SyncedFolder as SyncedFolder
from agentdoc.syncmarks import is_sync_journal as is_sync_journal
from agentdoc.syncmarks import marker_in as marker_in
from agentdoc.syncmarks import synced_folder as synced_folder
from agentdoc.syncmarks import synced_root as synced_root


def paced(path: Path, settings: Settings) -> Settings:
    """The settings for a turn on `path`: in a synced folder a streaming reply is written at
    most every `sync_flush_interval` seconds, so the sync tool publishes a few whole versions
    and a save from another machine rarely meets one of ours in flight (the start of the reply,
    approval requests and the end are still written at once)."""
    if synced_root(path, settings) is None:
        return settings
    interval = max(settings.flush_interval, settings.sync_flush_interval)
    return settings.model_copy(update={"flush_interval": interval})
