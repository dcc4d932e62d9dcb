"""Showing turn progress on the terminal.

On a TTY, one live line per active document, redrawn in place (finished turns leave one
permanent line); elsewhere (a log, systemd's journal), one plain line per state change.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TextIO

from agentdoc.turn import Progress

FINAL_STATES = frozenset({"done", "failed", "interrupted", "cancelled"})
REDRAW_EVERY = 0.1


def describe(p: Progress) -> str:
    rate = p.output_chars / 4 / p.elapsed if p.elapsed > 0 else 0.0
    parts = [f"{p.path.name} turn {p.turn}: {p.state}", f"{p.elapsed:.1f} s"]
    if p.output_chars:
        parts.append(f"~{p.output_chars // 4} tokens ({rate:.0f}/s)")
    if p.detail:
        parts.append(" ".join(p.detail.split())[:160])
    return " · ".join(parts)


class LiveView:
    """A progress callback, safe to call from several turn threads at once."""

    def __init__(self, out: TextIO | None = None, *, live: bool | None = None) -> None:
        self.out = out or sys.stderr
        self.live = self.out.isatty() if live is None else live
        self._active: dict[Path, Progress] = {}
        self._states: dict[Path, str] = {}
        self._drawn = 0
        self._last_draw = 0.0
        self._lock = threading.Lock()

    def __call__(self, p: Progress) -> None:
        with self._lock:
            changed = self._states.get(p.path) != p.state
            self._states[p.path] = p.state
            if p.state in FINAL_STATES:
                self._active.pop(p.path, None)
                self._states.pop(p.path, None)
            else:
                self._active[p.path] = p
            if self.live:
                self._redraw(p if p.state in FINAL_STATES else None, force=changed)
            elif changed:
                self.out.write(f"{time.strftime('%H:%M:%S')} {describe(p)}\n")
            self.out.flush()

    def _redraw(self, finished: Progress | None, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < REDRAW_EVERY:
            return
        self._last_draw = now
        if self._drawn:
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")
        if finished is not None:
            self.out.write(describe(finished) + "\n")
        for active in self._active.values():
            self.out.write(describe(active) + "\n")
        self._drawn = len(self._active)
