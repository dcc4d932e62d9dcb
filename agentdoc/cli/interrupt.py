"""Ctrl-C, SIGTERM and SIGHUP during a one-shot turn: end the turn cleanly, then exit.

Python's defaults would end `agentdoc run` mid-write: Ctrl-C unwinds from wherever the main
thread is (the reply's markers stay in the file), and SIGTERM or a closed terminal (SIGHUP) kill
the process outright, leaving the agent's process (in its own process group, so the terminal's
signal never reaches it) running and spending tokens. Instead, a signal asks the turn to stop:
the runner stops the agent's whole process group, closes the reply as interrupted and records the
status; the command then exits 128 + the signal's number (130, 143, 129).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Caught:
    """The first stop signal received while the block ran, if any."""

    signum: int | None = None
    event: threading.Event = field(default_factory=threading.Event)

    @property
    def exit_code(self) -> int | None:
        return None if self.signum is None else 128 + self.signum


@contextlib.contextmanager
def stop_on_signals(cancel: threading.Event) -> Iterator[Caught]:
    """Within the block, a stop signal sets `cancel` (once); a second one ends at once."""
    caught = Caught(event=cancel)
    if threading.current_thread() is not threading.main_thread():
        yield caught  # only the main thread may install handlers; callers there get defaults
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        if caught.signum is not None:
            # Asked twice: the person means it. The turn's own cleanup still runs on the way out.
            raise SystemExit(128 + signum)
        caught.signum = signum
        cancel.set()

    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        yield caught
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
