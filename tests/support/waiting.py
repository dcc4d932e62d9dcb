"""Waiting on a condition: the tests' alternative to sleeping."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], what: str = "", timeout: float = 30.0) -> None:
    """Poll `predicate` until it holds; fail after `timeout` seconds, naming `what` was awaited."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or predicate}")
        time.sleep(0.01)
