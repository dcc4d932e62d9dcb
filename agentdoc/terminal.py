"""Showing turn progress on the terminal: a live line on a TTY, plain log lines otherwise."""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from agentdoc.turn import Progress


def describe(p: Progress) -> str:
    rate = p.output_chars / 4 / p.elapsed if p.elapsed > 0 else 0.0
    parts = [f"{p.path.name} turn {p.turn}: {p.state}", f"{p.elapsed:.1f} s"]
    if p.output_chars:
        parts.append(f"~{p.output_chars // 4} tokens ({rate:.0f}/s)")
    if p.detail:
        parts.append(p.detail)
    return " · ".join(parts)


class ProgressLine:
    """One overwritten status line per turn when attached to a terminal."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.live = self.out.isatty()
        self._last_state = ""
        self._lock = threading.Lock()

    def __call__(self, p: Progress) -> None:
        with self._lock:
            if self.live:
                end = "\n" if p.state in ("done", "failed", "interrupted", "cancelled") else ""
                self.out.write("\r\x1b[2K" + describe(p) + end)
            elif p.state != self._last_state:
                self.out.write(describe(p) + "\n")
            self._last_state = p.state
            self.out.flush()
