"""Where this machine keeps agentdoc's own state, outside any watched tree: the search index,
undo's snapshots, this machine's id. Never synced, never in the user's git.

A module of its own, importing nothing heavy: quick commands (`search`) ask for it first.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$AGENTDOC_STATE_DIR, else the XDG state folder (`~/.local/state/agentdoc`)."""
    env = os.environ if environ is None else environ
    return _state_dir(env.get("AGENTDOC_STATE_DIR"), env.get("XDG_STATE_HOME"), env.get("HOME"))


@functools.lru_cache(maxsize=64)
def _state_dir(own: str | None, xdg: str | None, home: str | None) -> Path:
    # Kept per value: a turn asks many times a second (each state file's path starts here).
    if own:
        return Path(own)
    if xdg:
        return Path(xdg) / "agentdoc"
    return (Path(home) if home else Path.home()) / ".local" / "state" / "agentdoc"
