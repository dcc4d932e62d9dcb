"""The background fetch of `git: sync` documents: a prompt pushed from a phone is seen.

Every `git_sync_interval` seconds one thread fetches each repository that holds a document in
sync mode and, when the upstream has commits the branch lacks, tells the daemon's loop, which
merges them (never while that document's turn runs) and reads the document like a save.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.document import parsed_or_none
from agentdoc.turn import behind, sync_on, toplevel

log = logging.getLogger(__name__)


def in_sync_mode(text: str | None, settings: Settings) -> bool:
    if text is None:
        return False
    if settings.git != "sync" and "sync" not in text:
        return False  # most documents: no parse
    parsed = parsed_or_none(text)
    return parsed is not None and sync_on(parsed, settings)


def repositories(
    docs: Iterable[tuple[Path, str | None]], settings: Settings
) -> dict[Path, list[Path]]:
    """The repositories of the documents in sync mode, and those documents."""
    found: dict[Path, list[Path]] = {}
    for path, text in docs:
        if in_sync_mode(text, settings) and (top := toplevel(path)) is not None:
            found.setdefault(top, []).append(path)
    return found


def poll(
    snapshot: Callable[[], list[tuple[Path, str | None]]],
    settings: Callable[[], Settings],
    tell: Callable[[Path], None],
    stop: threading.Event,
) -> None:
    """Until `stop`: fetch every interval, `tell` each document whose upstream moved on.
    `settings` gives the settings as they are now (a saved config changes the interval)."""
    while not stop.wait(settings().git_sync_interval):
        try:
            for top, paths in repositories(snapshot(), settings()).items():
                if behind(top) > 0:
                    for path in paths:
                        tell(path)
        except Exception:  # a fetch that fails in a new way must not end the polling
            log.exception("the background git fetch failed")


def start_polling(
    snapshot: Callable[[], list[tuple[Path, str | None]]],
    settings: Callable[[], Settings],
    tell: Callable[[Path], None],
    stop: threading.Event,
) -> threading.Thread:
    thread = threading.Thread(
        target=poll, args=(snapshot, settings, tell, stop), name="git-fetch", daemon=True
    )
    thread.start()
    return thread
