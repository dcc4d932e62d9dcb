"""The daemon in-process: a `with` block that runs it on a thread, one built around the replaying
fake `claude`, and what a test reads of a document it serves."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from watchdog.observers import inotify_c

from agentdoc.daemon.events import Stop
from agentdoc.daemon.service import Daemon
from agentdoc.document import parser as document
from agentdoc.records import status
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


class Running:
    """`daemon.run` on a thread of its own until the block ends. `discovered`: the block starts
    once the first walk of the tree is done too (every document known), not only at ready."""

    def __init__(self, daemon: Daemon, *, discovered: bool = False) -> None:
        self.daemon = daemon
        self.discovered = discovered
        self.stop = Stop()
        self.thread = threading.Thread(target=daemon.run, args=(self.stop,))

    def __enter__(self) -> Daemon:
        self.thread.start()
        if self.discovered:
            assert self.daemon.discovered.wait(30), "the daemon's first walk did not end"
        else:
            assert self.daemon.ready.wait(10), "daemon did not start"
        return self.daemon

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(20)
        assert not self.thread.is_alive()


DOC = """---
agentdoc: {}
---

# Chat

## User

"""


def state_of(path: Path) -> str | None:
    current = status.read_status(path)
    return current.state if current else None


def roles(path: Path) -> list[str]:
    return [t.role for t in document.parse(path.read_text()).turns]


def make_daemon(folder: Path, fake: FakeClaude, **kwargs: object) -> Daemon:
    settings = fake.settings(settle_step=0.1, settle_max=1.0)
    return Daemon([folder], settings, environ=fake.env, rescan_interval=0.5, **kwargs)  # type: ignore[arg-type]


def refuse_watches(monkeypatch: pytest.MonkeyPatch, below: Path) -> None:
    """inotify out of watches for `below` and every folder under it, as the kernel says it:
    `inotify_add_watch` returns -1 with errno ENOSPC."""
    real = inotify_c.inotify_add_watch

    def add_watch(fd: int, path: bytes, mask: int) -> int:
        if Path(os.fsdecode(path)).is_relative_to(below):
            ctypes.set_errno(errno.ENOSPC)
            return -1
        return real(fd, path, mask)

    monkeypatch.setattr(inotify_c, "inotify_add_watch", add_watch)


def save_and_wait_reply(doc: Path, text: str) -> None:
    """Save `text` (a prompt at its end) as the document and wait for the daemon's reply and the
    turn's end: the first exchange of most daemon tests."""
    doc.write_text(text)
    wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    wait_for(lambda: state_of(doc) == "idle", what="the turn's end")


def save_and_wait_streaming(doc: Path, text: str) -> None:
    """Save `text` (a prompt at its end) as the document and wait until the reply streams into it
    (the long transcript's tenth line is in)."""
    doc.write_text(text)
    wait_for(lambda: "w10 " in doc.read_text(), what="streaming")


@contextlib.contextmanager
def first_answered(doc: Path, fake: FakeClaude) -> Iterator[str]:
    """The daemon serving `doc`'s folder, `doc` asked "first" and answered before the block
    starts: its text then."""
    with Running(make_daemon(doc.parent, fake)):
        save_and_wait_reply(doc, DOC + "first\n")
        yield doc.read_text()


def first_answered_then_stopped(doc: Path, fake: FakeClaude) -> None:
    """`first_answered`, and the daemon stopped again."""
    with first_answered(doc, fake):
        pass
