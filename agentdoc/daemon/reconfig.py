"""The user's config read again while the daemon runs: a saved setting takes effect at once.

The daemon looks at the config file's stamp (a stat) about once a second. A new, valid config
replaces the settings every part of the daemon reads (the next turn, the gate's budget, the
notify command, the warm pool's sizes, the background fetch's interval); the few a running
watch cannot change are named in the log and in `agentdoc status` until it restarts. An edit
that does not read as valid settings changes nothing: the daemon keeps the last good ones and
says why, in the same two places, until the file reads again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

# How saves settle is set in the watch of the tree when it starts.
WATCH_KEYS = ("settle_step", "settle_max", "settle_guard")


def changed_keys(old: Settings, new: Settings) -> list[str]:
    """The settings whose values differ, in the order `Settings` declares them."""
    return [key for key in Settings.model_fields if getattr(old, key) != getattr(new, key)]


def needing_restart(started: Settings, new: Settings) -> list[str]:
    """The settings of `new` a daemon started with `started` cannot take in while it runs."""
    keys = [key for key in WATCH_KEYS if getattr(started, key) != getattr(new, key)]
    if started.warm_sessions == 0 and new.warm_sessions > 0:
        keys.append("warm_sessions")  # a daemon started without warm processes has no pool
    return keys


def restart_note(keys: list[str]) -> str:
    verb = "takes" if len(keys) == 1 else "take"
    return f"{', '.join(keys)} {verb} effect when `agentdoc watch` restarts"


def refusal_note(why: str) -> str:
    return f"not applied: {why}; running with the last good settings"


@dataclass(frozen=True)
class Reread:
    """What a save of the config brought: new settings to apply, or why none."""

    settings: Settings | None  # None: the file does not read as valid settings
    changed: list[str] = field(default_factory=list)
    problem: str | None = None


@dataclass
class ConfigWatch:
    """The config file a running daemon reads again when its stamp changes."""

    path: Path
    load: Callable[[Path], Settings]  # AgentdocError when the file is not valid settings
    current: Settings
    every: float = 0.0  # seconds between two looks at the stamp (a stat each)
    # None until the first look, which reads the file: a save made between the daemon's
    # reading of its settings and its start is then taken in too.
    _stamp: tuple[int, int, int] | None = field(default=None, init=False)
    _looked: bool = field(default=False, init=False)
    _last: float | None = field(default=None, init=False)  # when the stamp was last looked at

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def look(self) -> Reread | None:
        """The settings as saved, if the file changed since the last look; else None (also
        when the last look was less than `every` seconds ago)."""
        now = time.monotonic()
        if self._last is not None and now - self._last < self.every:
            return None
        self._last = now
        stamp = self._stat()
        if stamp == self._stamp and self._looked:
            return None
        self._stamp, self._looked = stamp, True
        try:
            new = self.load(self.path)
        except AgentdocError as exc:
            return Reread(None, problem=str(exc))
        changed = changed_keys(self.current, new)
        self.current = new
        return Reread(new, changed)
