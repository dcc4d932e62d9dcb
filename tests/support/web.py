"""The web page in a real browser: Debian's Chromium driven by Playwright, at a phone's size.

Nothing is downloaded: Playwright's own browsers are never installed; the distribution's
`/usr/bin/chromium` is launched (`make editors` installs it). Without it the browser tests
skip (and fail on CI).
"""

from __future__ import annotations

import contextlib
import os
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.processes import WatchProcess, watching
from tests.support.waiting import wait_for

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE_WIDTH, PHONE_HEIGHT = 390, 844


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    missing = not CHROMIUM.exists()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = True
    if missing:
        why = "Debian's chromium and the playwright package are needed (make editors)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def phone(browser: Browser) -> Page:
    """A fresh page at a phone's viewport, touch on (its own cookies)."""
    context = browser.new_context(
        viewport={"width": PHONE_WIDTH, "height": PHONE_HEIGHT}, has_touch=True, is_mobile=True
    )
    context.set_default_timeout(30_000)
    return context.new_page()


def status_of(page: Page, url: str) -> int:
    """The HTTP status of going to `url` in `page`."""
    answer = page.goto(url)
    assert answer is not None, url
    return answer.status


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # it answered (401 without the token)
    except OSError:
        return False


@contextlib.contextmanager
def serving(
    folder: Path, env: Mapping[str, str], log: Path, extra: Sequence[str] = ()
) -> Iterator[tuple[WatchProcess, str]]:
    """`agentdoc watch --serve` on a free loopback port, ready; its page's address."""
    port = free_port()
    with watching(folder, env, log, ["--serve", f"127.0.0.1:{port}", *extra]) as daemon:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: answers(url + "/static/page.css"), "the page to answer")
        yield daemon, url


@contextlib.contextmanager
def served_to_chromium(
    folder: Path, env: Mapping[str, str], log: Path, extra: Sequence[str] = ()
) -> Iterator[tuple[str, Browser]]:
    """`serving` the folder, and a Chromium to look at it with: the page's address, the browser."""
    with serving(folder, env, log, extra) as (_daemon, url), chromium() as browser:
        yield url, browser
