"""Real Vim, Neovim and Emacs save a document; the watcher sees each save end when it ends.

The watcher's quiet step is a minute here, far longer than any wait in these tests, so a save
that is handed out was recognised as complete by its own events (a close after writing, or a
rename into place), whichever way the editor wrote it. Each editor runs in batch mode on a
document outside the system temp folder's defaults, with its usual backup behaviour, and opens
the document as it does for a person: that open is reported, agentdoc's own reads are not.
"""

from __future__ import annotations

import itertools
import queue
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentdoc.daemon.events import Stop
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.watch import watcher as watcher_mod
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.watcher import Watcher
from tests.support.fake_claude import FakeClaude
from tests.support.processes import roles
from tests.support.waiting import wait_for

pytestmark = pytest.mark.filterwarnings(f"ignore:{watcher_mod.DOUBLE_WATCH_WARNING}:RuntimeWarning")

DOC = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\n"
PROMPT = "Typed and saved in a real editor."
TIMEOUT = 20.0


def vim_save(binary: str) -> Callable[[Path, str], list[str]]:
    def argv(path: Path, line: str) -> list[str]:
        # `writebackup` (the default) makes Vim rename the file away and write a new one.
        return [binary, "-Nu", "NONE", "-i", "NONE", "-n", "-Es", "-c", f"edit {path}",
                "-c", f"call append(line('$'), '{line}')", "-c", "write", "-c", "qa!"]  # fmt: skip

    return argv


def emacs_save(path: Path, line: str) -> list[str]:
    program = (
        f'(progn (find-file "{path}") (goto-char (point-max)) (insert "{line}\\n") (save-buffer))'
    )
    return ["emacs", "--batch", "-Q", "--eval", program]


EDITORS = {"vim": vim_save("vim"), "nvim": vim_save("nvim"), "emacs": emacs_save}


def editor(name: str) -> Callable[[Path, str], list[str]]:
    if shutil.which(name) is None:
        pytest.skip(f"{name} is not installed (`make editors`)")
    return EDITORS[name]


def run_editor(argv: list[str], home: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TERM": "dumb"}
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


class Watched:
    """A watcher that trusts completed saves only: its quiet step never ends in a test."""

    def __init__(self, folder: Path) -> None:
        self.opened: queue.Queue[Path] = queue.Queue()
        self.settled: queue.Queue[Path] = queue.Queue()
        self.watcher = Watcher(
            [folder], step=60.0, max_wait=120.0, rescan_interval=0, guard=0.02,
            on_open=self.opened.put,
        )  # fmt: skip
        self.stop = threading.Event()
        self.counter = itertools.count()
        self.watcher.start()
        self.thread = threading.Thread(target=self._collect, daemon=True)
        self.thread.start()

    def _collect(self) -> None:
        for path in self.watcher.changes(self.stop):
            self.settled.put(path)

    def next(self) -> Path:
        try:
            return self.settled.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"no save was seen complete within {TIMEOUT:.0f} s")

    def others_before(self, folder: Path) -> list[Path]:
        """What settled before a fresh marker file's (one save each: never a burst)."""
        marker = folder / f"marker-{next(self.counter)}.md"
        marker.write_text("marker\n")
        before = []
        while (found := self.next()) != marker:
            before.append(found)
        return before

    def close(self) -> None:
        self.stop.set()
        self.watcher.wake()
        self.thread.join(TIMEOUT)
        self.watcher.stop()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder with the document, written before anything watches it (a save seen by the
    watcher would make the editor's save, right after it, part of a burst)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "chat.md").write_text(DOC)
    (tmp_path / "home").mkdir()
    return docs.resolve()


@pytest.fixture
def watched(folder: Path) -> Iterator[Watched]:
    running = Watched(folder)
    yield running
    running.close()


def _drain(found: queue.Queue[Path]) -> list[Path]:
    items = []
    while not found.empty():
        items.append(found.get_nowait())
    return items


@pytest.fixture(params=sorted(EDITORS))
def type_prompt(request: pytest.FixtureRequest, folder: Path) -> Callable[[Path], None]:
    """Each real editor in turn, typing PROMPT at the end of a document and saving it."""
    argv = editor(request.param)
    return lambda doc: run_editor(argv(doc, PROMPT), folder.parent / "home")


def test_a_real_editors_save_is_seen_complete_once(
    folder: Path, watched: Watched, type_prompt: Callable[[Path], None]
) -> None:
    doc = folder / "chat.md"
    type_prompt(doc)
    assert watched.next() == doc
    assert read_stable(doc) == (DOC + PROMPT + "\n").encode()
    assert watched.others_before(folder) == []


def test_a_real_editor_opening_the_document_is_reported(
    folder: Path, watched: Watched, type_prompt: Callable[[Path], None]
) -> None:
    doc = folder / "chat.md"
    read_stable(doc)  # agentdoc's own read: not an editor's open
    watched.others_before(folder)
    assert doc not in _drain(watched.opened)
    type_prompt(doc)
    watched.others_before(folder)
    assert doc in _drain(watched.opened)


def test_the_daemon_sends_a_prompt_vim_saved_without_waiting_for_quiet(
    folder: Path, plain_claude: FakeClaude
) -> None:
    argv = editor("vim")
    doc = folder / "chat.md"
    settings = plain_claude.settings(settle_step=60.0, settle_max=120.0)
    daemon = Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0)
    stop = Stop()
    thread = threading.Thread(target=daemon.run, args=(stop,))
    thread.start()
    try:
        assert daemon.discovered.wait(TIMEOUT)
        run_editor(argv(doc, PROMPT), folder.parent / "home")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], "the reply", TIMEOUT)
    finally:
        stop.set()
        thread.join(TIMEOUT)
    assert [call["stdin"] for call in plain_claude.calls()] == [PROMPT]
