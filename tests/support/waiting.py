"""Waiting on a condition: the tests' alternative to sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable

# Polls start 10 ms apart and spread to 50 ms as a wait grows: most waits end within a few
# polls, and a long one (a reply streaming for seconds) no longer wakes the test and reads its
# file a hundred times a second. Those polls were a fifth of a pytest worker's CPU.
FIRST_POLL = 0.01
LAST_POLL = 0.05


def wait_for(predicate: Callable[[], bool], what: str = "", timeout: float = 30.0) -> None:
    """Poll `predicate` until it holds; fail after `timeout` seconds, naming `what` was awaited."""
    start = time.monotonic()
    deadline = start + timeout
    while not predicate():
        now = time.monotonic()
        if now > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or predicate}")
        time.sleep(min(LAST_POLL, FIRST_POLL + (now - start) / 20))
