"""The page served beside the daemon: uvicorn on a thread of the `agentdoc watch` process.

Not a second process: the page reads the files the daemon watches, and hears the daemon's own
writes (`on_written`) and the saves its watcher sees (`Hub.tell`) in the same process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentdoc.config import Settings
from agentdoc.document import on_written
from agentdoc.errors import AgentdocError
from agentdoc.web.places import roots_of
from agentdoc.web.token import serve_token

if TYPE_CHECKING:
    from agentdoc.web.live import Hub

log = logging.getLogger(__name__)

DEFAULT_ADDRESS = "127.0.0.1:8765"
START_TIMEOUT = 10.0


def split_address(address: str) -> tuple[str, int]:
    """`HOST:PORT`, `[v6]:PORT`, `:PORT` or `PORT` → (host, port); 127.0.0.1 by default."""
    text = address.strip()
    host, _, port = text.rpartition(":") if ":" in text else ("", "", text)
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        number = -1
    if not 0 < number < 65536:
        raise AgentdocError(f"--serve {address!r}: give HOST:PORT, e.g. {DEFAULT_ADDRESS}")
    return host, number


@dataclass(frozen=True)
class Serving:
    """How the page is served (from `agentdoc watch --serve` and the config's `serve`)."""

    address: str = DEFAULT_ADDRESS
    read_only: bool = False
    token: bool = False  # ask for the token even on loopback (behind `tailscale serve`)
    cert: Path | None = None
    key: Path | None = None


@dataclass
class Running:
    url: str
    token: str | None
    hub: Hub
    _server: object
    _thread: threading.Thread
    _unhook: Callable[[], None] = field(default=lambda: None)

    def stop(self) -> None:
        self._server.should_exit = True  # type: ignore[attr-defined]
        self._thread.join(timeout=5)
        self._unhook()


def serve(
    roots: list[Path],
    settings: Settings,
    serving: Serving,
    documents: Callable[[], list[Path]],
    untrusted: Callable[[Path], str | None],
) -> Running:
    """Start the page; AgentdocError when it cannot listen (the address taken, a bad cert)."""
    # Here, not at the top: a daemon that serves no page loads neither Starlette nor uvicorn.
    import uvicorn

    from agentdoc.web.app import Site, make_app
    from agentdoc.web.guard import is_loopback

    host, port = split_address(serving.address)
    if (serving.cert is None) != (serving.key is None):
        raise AgentdocError("--cert and --key go together: give both files, or neither")
    token = serve_token() if serving.token or not is_loopback(host) else None
    site = Site(
        roots_of(roots),
        documents,
        untrusted,
        marker=settings.submit_marker,
        default_trigger=settings.trigger,
        read_only=serving.read_only,
    )
    secure = serving.cert is not None
    app = make_app(site, token=token, secure=secure)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        log_level="warning",
        access_log=False,
        ssl_certfile=str(serving.cert) if serving.cert else None,
        ssl_keyfile=str(serving.key) if serving.key else None,
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="agentdoc-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise AgentdocError(
                f"cannot serve the page on {serving.address} (is the port taken? see the log)"
            )
        thread.join(0.02)
    unhook = on_written(site.hub.tell)
    shown_host = f"[{host}]" if ":" in host else host
    url = f"{'https' if secure else 'http'}://{shown_host}:{port}/"
    log.info("serving the page on %s%s", url, " (read-only)" if serving.read_only else "")
    return Running(url, token, site.hub, server, thread, unhook)
