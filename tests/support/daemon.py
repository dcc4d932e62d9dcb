"""An in-process daemon for a test's `with` block."""

from __future__ import annotations

import threading

from agentdoc.daemon.service import Daemon


class Running:
    """`daemon.run` on a thread of its own until the block ends. `discovered`: the block starts
    once the first walk of the tree is done too (every document known), not only at ready."""

    def __init__(self, daemon: Daemon, *, discovered: bool = False) -> None:
        self.daemon = daemon
        self.discovered = discovered
        self.stop = threading.Event()
        self.thread = threading.Thread(target=daemon.run, args=(self.stop,))

    def __enter__(self) -> Daemon:
        self.thread.start()
        started = self.daemon.discovered if self.discovered else self.daemon.ready
        assert started.wait(10), "daemon did not start"
        return self.daemon

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(20)
        assert not self.thread.is_alive()
