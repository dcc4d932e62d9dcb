"""Where this machine keeps agentdoc's own state, outside any watched tree: the search index,
undo's snapshots, this machine's id. Never synced, never in the user's git.

A module of its own, importing nothing heavy: quick commands (`search`) ask for it first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """$AGENTDOC_STATE_DIR, else the XDG state folder (`~/.local/state/agentdoc`)."""
    env = os.environ if environ is None else environ
    if env.get("AGENTDOC_STATE_DIR"):
        return Path(env["AGENTDOC_STATE_DIR"])
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "agentdoc"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "state" / "agentdoc"
