"""A folder that goes away while the watch is being set up: a sub-folder is skipped (told in
the log) and the daemon serves the rest; a root that goes is a clear agentdoc error, never a
traceback. The race is injected in-process, at the step it would fall between."""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdoc.daemon.events import Stop
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.watch import tree
from agentdoc.daemon.watch.watcher import Watcher
from agentdoc.errors import AgentdocError
from tests.support.daemon import DOC, Running, make_daemon, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


@pytest.fixture
def uncaught(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What any thread let escape (a traceback on the terminal)."""
    escaped: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: escaped.append(repr(a.exc_value)))
    yield escaped


def _before_watch(monkeypatch: pytest.MonkeyPatch, doomed: Path) -> None:
    """`doomed` goes away after the roots were planned, before the watch is scheduled."""
    start = Watcher._start_observer

    def racing(self: Watcher) -> Any:
        shutil.rmtree(doomed)
        return start(self)

    monkeypatch.setattr(Watcher, "_start_observer", racing)


def _during_walk(monkeypatch: pytest.MonkeyPatch, doomed: Path) -> None:
    """`doomed` goes away just as the first walk of the tree comes to list it."""
    listing = tree.list_folder

    def racing(path: str) -> tree.Folder | None:
        if path == str(doomed) and doomed.exists():
            shutil.rmtree(doomed)
        return listing(path)

    monkeypatch.setattr(tree, "list_folder", racing)


def _fails(daemon: Daemon) -> AgentdocError:
    """Run `daemon` until it ends; the agentdoc error it ends with."""
    ended: list[BaseException] = []
    stop = Stop()

    def run() -> None:
        try:
            daemon.run(stop)
        except BaseException as exc:
            ended.append(exc)

    runner = threading.Thread(target=run)
    runner.start()
    runner.join(20)
    stop.set()  # a daemon that did not end is stopped, and the test fails below
    runner.join(20)
    assert ended and isinstance(ended[0], AgentdocError), ended
    return ended[0]


@pytest.mark.parametrize("when", [_before_watch, _during_walk])
def test_a_vanished_sub_folder_is_skipped_and_the_rest_served(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    uncaught: list[str],
    when: Callable[[pytest.MonkeyPatch, Path], None],
    plain_claude: FakeClaude,
) -> None:
    folder = tmp_path / "docs"
    sub = folder / "sub"
    (sub / "deeper").mkdir(parents=True)
    (sub / "deeper" / "note.md").write_text("# a note\n")
    doc = folder / "chat.md"
    doc.write_text(DOC)
    when(monkeypatch, sub.resolve())
    caplog.set_level(logging.INFO)
    # The sub-folder named as a root too: its own watch is the one that cannot be set up.
    daemon = make_daemon(folder, plain_claude)
    daemon.roots = [folder, sub]
    with Running(daemon, discovered=True):
        doc.write_text(DOC + "still here?\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply")
    assert not uncaught
    if when is _before_watch:
        assert "went away while its watch was being set up; skipped" in caplog.text


def test_a_root_gone_before_its_watch_is_an_agentdoc_error(
    tmp_path: Path,
    fake_claude: Callable[[str], FakeClaude],
    monkeypatch: pytest.MonkeyPatch,
    uncaught: list[str],
) -> None:
    folder, other = tmp_path / "docs", tmp_path / "other"
    folder.mkdir()
    other.mkdir()
    _before_watch(monkeypatch, folder)
    daemon = make_daemon(other, fake_claude("plain_text.ndjson"))
    daemon.roots = [folder, other]
    error = _fails(daemon)
    assert f"{folder.resolve()}: the folder went away" in str(error)
    assert not uncaught


def test_a_root_gone_during_the_first_walk_is_an_agentdoc_error(
    fake_claude: Callable[[str], FakeClaude],
    monkeypatch: pytest.MonkeyPatch,
    uncaught: list[str],
    folder: Path,
) -> None:
    (folder / "chat.md").write_text(DOC)
    _during_walk(monkeypatch, folder.resolve())
    error = _fails(make_daemon(folder, fake_claude("plain_text.ndjson")))
    assert f"{folder.resolve()}: the folder went away" in str(error)
    assert not uncaught
