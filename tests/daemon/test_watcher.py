"""The watcher against a real observer: one settled path per logical save, whatever the editor."""

from __future__ import annotations

import errno
import itertools
import logging
import os
import queue
import re
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from watchdog.events import FileSystemEvent
from watchdog.observers.inotify import InotifyObserver

from agentdoc.daemon.watch import fsevents, observing, tree, watchlimit
from agentdoc.daemon.watch import watcher as watcher_mod
from agentdoc.daemon.watch.roots import changed_paths, is_ignored, plan_roots
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.daemon.watch.watcher import Watcher
from agentdoc.errors import AgentdocError
from tests.support import editor_saves
from tests.support.daemon import refuse_watches
from tests.support.editor_saves import autosave_burst, save
from tests.support.waiting import wait_for

# The project turns warnings into errors, which puts test filters ahead of the one watcher.py
# installs; a benign watchdog warning would otherwise kill its inotify thread mid-test.
pytestmark = pytest.mark.filterwarnings(f"ignore:{watcher_mod.DOUBLE_WATCH_WARNING}:RuntimeWarning")

STEP = 0.15
MAX_WAIT = 1.0
POLL_INTERVAL = 0.05
TIMEOUT = 5.0
OBSERVERS = ["inotify", "poll"]


@dataclass
class Running:
    """A watcher whose `changes()` runs in a thread, collecting yields into a queue."""

    watcher: Watcher
    stop: threading.Event = field(default_factory=threading.Event)
    yields: queue.Queue[Path] = field(default_factory=queue.Queue)
    counter: Iterator[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._collect, daemon=True)
        self.thread.start()

    def _collect(self) -> None:
        for path in self.watcher.changes(self.stop):
            self.yields.put(path)

    def next(self) -> Path:
        try:
            return self.yields.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"nothing settled within {TIMEOUT} s")

    def barrier(self, marker: Path) -> list[Path]:
        """Everything yielded for activity before now, up to a save of `marker`.

        Two rounds, because a poll can pick up an earlier change in the same pass as the
        marker; by the second marker save every earlier event has been seen and settled.
        """
        before: list[Path] = []
        for _ in range(2):
            marker.write_text(f"barrier {next(self.counter)}\n")
            while (path := self.next()) != marker:
                before.append(path)
        return before

    def close(self) -> None:
        self.stop.set()
        self.watcher.wake()
        self.thread.join(timeout=TIMEOUT)
        self.watcher.stop()
        assert not self.thread.is_alive(), "changes() did not return after stop was set"


StartWatch = Callable[..., Running]


@pytest.fixture
def watch() -> Iterator[StartWatch]:
    running: list[Running] = []

    def start(
        roots: Sequence[Path],
        *,
        observer: str = "inotify",
        step: float = STEP,
        max_wait: float = MAX_WAIT,
        rescan_interval: float = 0.0,  # off unless under test: it would hide missed events
        guard: float | None = None,
        on_open: Callable[[Path], None] = lambda _path: None,
    ) -> Running:
        watcher = Watcher(
            roots,
            step=step,
            max_wait=max_wait,
            poll=observer == "poll",
            poll_interval=POLL_INTERVAL,
            rescan_interval=rescan_interval,
            guard=guard,
            on_open=on_open,
        )
        watcher.start()
        running.append(Running(watcher))
        return running[-1]

    yield start
    for run in running:
        run.close()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    notes = tmp_path.resolve() / "notes"
    notes.mkdir()
    (notes / "doc.md").write_text("# v1\n")
    (notes / "doc.md").chmod(0o640)
    return notes


@pytest.mark.parametrize("strategy", sorted(editor_saves.STRATEGIES))
@pytest.mark.parametrize("observer", OBSERVERS)
def test_each_save_strategy_settles_once(
    watch: StartWatch, folder: Path, observer: str, strategy: str
) -> None:
    doc = folder / "doc.md"
    run = watch([folder], observer=observer)
    save(doc, "# v2, a longer version\n", strategy)
    assert run.next() == doc
    # The consumer reads what settled; its read must not look like another save.
    assert read_stable(doc) == b"# v2, a longer version\n"
    assert run.barrier(folder / "marker.md") == []
    assert stat.S_IMODE(doc.stat().st_mode) == 0o640


@pytest.mark.parametrize("observer", OBSERVERS)
def test_an_autosave_burst_settles_once(watch: StartWatch, folder: Path, observer: str) -> None:
    doc = folder / "doc.md"
    run = watch([folder], observer=observer, step=0.3)
    texts = [f"# draft {'.' * n}\n" for n in range(5)]
    autosave_burst(doc, texts, interval=0.05)
    assert run.next() == doc
    assert run.barrier(folder / "marker.md") == []
    assert read_stable(doc) == texts[-1].encode()


# A quiet step and a maximum wait far longer than a test waits for anything: a save that settles
# in time was settled by its completion (close-write, rename into place), not by quiet. (Each
# path is saved once: a second save within the step would be a burst, which waits for quiet.)
NEVER_QUIET = {"step": 60.0, "max_wait": 120.0, "guard": 0.02}


def once_each(run: Running, *paths: Path) -> list[Path]:
    """Save each of `paths` once, in turn, and return whatever settled before each one did."""
    before: list[Path] = []
    for path in paths:
        path.write_text("barrier\n")
        while (found := run.next()) != path:
            before.append(found)
    return before


@pytest.mark.parametrize("strategy", sorted(editor_saves.STRATEGIES))
def test_each_save_strategy_completes_without_waiting_for_quiet(
    watch: StartWatch, folder: Path, strategy: str
) -> None:
    doc = folder / "doc.md"
    run = watch([folder], **NEVER_QUIET)
    save(doc, f"# saved by {strategy}\n", strategy)
    assert run.next() == doc
    assert read_stable(doc) == f"# saved by {strategy}\n".encode()
    assert once_each(run, folder / "m1.md", folder / "m2.md") == []


def test_only_inotify_reports_the_end_of_a_write() -> None:
    """Polling (and FSEvents, kqueue, ReadDirectoryChangesW) see that a file changed, never
    that a write ended: those settle by quiet only."""
    assert not watcher_mod.completions_trusted(poll=True)
    assert watcher_mod.completions_trusted(poll=False) == sys.platform.startswith("linux")


def test_an_autosave_burst_is_coalesced_after_its_first_save(
    watch: StartWatch, folder: Path
) -> None:
    """The first save of a burst is complete and goes at once; the saves right after it are a
    burst, which settles by quiet: at most one more hand-out, of the last version."""
    doc = folder / "doc.md"
    run = watch([folder], step=0.3, guard=0.01)
    texts = [f"# draft {'.' * n}\n" for n in range(5)]
    autosave_burst(doc, texts, interval=0.05)
    assert run.next() == doc
    later = run.barrier(folder / "marker.md")
    assert later in ([], [doc])
    assert read_stable(doc) == texts[-1].encode()


def test_opens_by_other_processes_are_reported_and_our_own_reads_are_not(
    watch: StartWatch, folder: Path
) -> None:
    doc = folder / "doc.md"
    opened: queue.Queue[Path] = queue.Queue()
    run = watch([folder], on_open=opened.put, **NEVER_QUIET)
    assert read_stable(doc) == b"# v1\n"  # agentdoc's own read
    once_each(run, folder / "m1.md")
    assert [p for p in _drain(opened) if p == doc] == []
    with doc.open("rb") as handle:  # another program's read, as far as agentdoc knows
        handle.read()
    once_each(run, folder / "m2.md")
    assert [p for p in _drain(opened) if p == doc] == [doc]


def _drain(found: queue.Queue[Path]) -> list[Path]:
    items: list[Path] = []
    while not found.empty():
        items.append(found.get_nowait())
    return items


ARTEFACTS = [
    ".doc.md.swp",
    ".doc.md.swx",
    "4913",
    "doc.md~",
    "#doc.md#",
    "doc.md___jb_tmp___",
    "doc.md___jb_old___",
    ".doc.md.tmp1234",
    ".subl3f2.tmp",
    ".agentdoc-tmp-k2j4h",
    "doc.thinking.md",
    "notes.txt",
    ".agentdoc/status.json",
    ".agentdoc/doc.md",
    ".git/COMMIT_EDITMSG.md",
]


@pytest.mark.parametrize("observer", OBSERVERS)
def test_artefacts_never_settle(watch: StartWatch, folder: Path, observer: str) -> None:
    run = watch([folder], observer=observer)
    for name in ARTEFACTS:
        path = folder / name
        path.parent.mkdir(exist_ok=True)
        path.write_text("x\n")
    (folder / ".#doc.md").symlink_to("user@host.1:1")
    for name in ARTEFACTS:
        (folder / name).unlink()
    assert run.barrier(folder / "marker.md") == []


def test_nested_folders_are_watched(watch: StartWatch, folder: Path) -> None:
    run = watch([folder])
    nested = folder / "a" / "b"
    nested.mkdir(parents=True)
    save(nested / "deep.md", "# deep\n", "in_place")
    assert run.next() == nested / "deep.md"


@pytest.mark.parametrize("observer", OBSERVERS)
def test_a_single_file_root_survives_replacing_saves(
    watch: StartWatch, folder: Path, observer: str
) -> None:
    doc = folder / "doc.md"
    marker = folder / "marker.md"
    other = folder / "other.md"
    other.write_text("not watched\n")
    run = watch([doc, marker], observer=observer)
    for n, strategy in enumerate(["vim_rename", "vim_rename", "jetbrains", "emacs", "in_place"]):
        save(doc, f"# save {n}\n", strategy)
        save(other, f"# other {n}\n", "in_place")
        assert run.next() == doc, strategy
    assert run.barrier(marker) == []


def test_a_single_file_root_may_not_exist_yet(watch: StartWatch, folder: Path) -> None:
    doc = folder / "later.md"
    run = watch([doc])
    save(doc, "# hello\n", "in_place")
    assert run.next() == doc


@pytest.mark.parametrize("observer", OBSERVERS)
def test_deletion_is_reported(watch: StartWatch, folder: Path, observer: str) -> None:
    doc = folder / "doc.md"
    run = watch([folder], observer=observer)
    doc.unlink()
    assert run.next() == doc
    assert read_stable(doc, attempts=1) is None


def _drop_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the observer blind, as when the kernel's event queue overflowed."""

    def drop(self: object, event: FileSystemEvent) -> None:
        pass

    monkeypatch.setattr(fsevents.EventHandler, "dispatch", drop)


def test_rescan_catches_changes_the_observer_missed(
    watch: StartWatch, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _drop_events(monkeypatch)
    doc = folder / "doc.md"
    gone = folder / "gone.md"
    gone.write_text("# soon deleted\n")
    run = watch([folder], rescan_interval=0.1)
    save(doc, "# changed behind the observer's back\n", "vim_rename")
    save(folder / "new.md", "# new\n", "in_place")
    gone.unlink()
    assert {run.next() for _ in range(3)} == {doc, folder / "new.md", gone}
    assert run.barrier(folder / "marker.md") == []


def test_a_reported_overflow_makes_the_rescan_look_at_every_file(
    watch: StartWatch, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _drop_events(monkeypatch)
    os.utime(folder, ns=(10**18, 10**18))  # an old folder: the plain rescan trusts its mtime
    doc = folder / "doc.md"
    run = watch([folder], rescan_interval=0.1)
    doc.write_text("# rewritten in place while the kernel's queue overflowed\n")
    # What watchdog logs when the kernel reports IN_Q_OVERFLOW (its only report of it).
    logging.getLogger(watchlimit.OVERFLOW_LOGGER).warning(
        "Inotify queue overflowed; filesystem events were lost"
    )
    assert run.next() == doc


def _hidden_from_the_observer(monkeypatch: pytest.MonkeyPatch, marker: Path) -> Path:
    """`marker`, whose events the observer drops: only a rescan finds it."""
    dispatch = fsevents.EventHandler.dispatch

    def blind_to_marker(self: fsevents.EventHandler, event: FileSystemEvent) -> None:
        if marker.name not in (Path(str(event.src_path)).name, Path(str(event.dest_path)).name):
            dispatch(self, event)

    monkeypatch.setattr(fsevents.EventHandler, "dispatch", blind_to_marker)
    return marker


def test_rescan_does_not_repeat_what_events_reported(
    watch: StartWatch, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The marker is only seen by the rescan, so the barrier spans rescans that ran after the
    # document settled: a rescan repeating the save would show up before the marker.
    marker = _hidden_from_the_observer(monkeypatch, folder / "marker.md")
    doc = folder / "doc.md"
    run = watch([folder], rescan_interval=0.3)
    save(doc, "# v2\n", "in_place")
    assert run.next() == doc
    assert run.barrier(marker) == []


def test_rescan_leaves_a_save_in_hand_to_settle(
    folder: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A save whose events are in hand and still settling (a second save soon after the first
    waits for quiet) is left to settle: a rescan that finds files changed since its last look
    touches only what no event reported. Driven by hand, with no observer: when a rescan runs
    against the events' delivery is the machine's business."""
    watcher = Watcher([folder], step=STEP, max_wait=MAX_WAIT)
    watcher._index = tree.build([folder], [], lambda _path: None)
    reported, missed = folder / "reported.md", folder / "missed.md"
    reported.write_text("# saved, its events in hand\n")
    missed.write_text("# saved, no event seen\n")
    watcher._settler.touch(reported)
    caplog.set_level(logging.DEBUG, logger=watcher_mod.__name__)
    assert watcher._rescan()
    told = [r.getMessage() for r in caplog.records if "did not report" in r.getMessage()]
    assert told == [f"rescan found a change the observer did not report: {missed}"]
    assert watcher._settler.holds(missed)


def test_changes_returns_once_stopped_and_woken(
    watch: StartWatch, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An idle watch sleeps on its queue (here up to an hour); the daemon's `Stop` wakes it.
    monkeypatch.setattr(watcher_mod, "TICK", 3600.0)
    run = watch([folder])
    run.stop.set()
    run.watcher.wake()
    run.thread.join(timeout=10)
    assert not run.thread.is_alive()


def test_stop_is_idempotent(folder: Path) -> None:
    watcher = Watcher([folder], step=STEP, max_wait=MAX_WAIT)
    watcher.start()
    watcher.stop()
    watcher.stop()


def _told(folder: Path, polling: list[str]) -> Watcher:
    return Watcher(
        [folder],
        step=STEP,
        max_wait=MAX_WAIT,
        poll_interval=POLL_INTERVAL,
        on_polling=polling.append,
    )


def _polls_and_sees(folder: Path, written: Path, says: Callable[[str], object]) -> None:
    """A watcher on `folder` polls from its start and says so once, in words `says` accepts;
    then it still sees `written` written."""
    polling: list[str] = []
    watcher = _told(folder, polling)
    watcher.start()
    assert polling == [watcher.polling]
    run = Running(watcher)
    try:
        assert says(polling[0]), polling[0]
        written.write_text("written while polling\n")
        assert run.next() == written
    finally:
        run.close()


@pytest.mark.parametrize(
    ("code", "sysctl"),
    [
        (errno.ENOSPC, "fs.inotify.max_user_watches"),
        (errno.EMFILE, "fs.inotify.max_user_instances"),
    ],
)
def test_out_of_inotify_the_watcher_polls_and_says_how_to_fix_it(
    folder: Path, monkeypatch: pytest.MonkeyPatch, code: int, sysctl: str
) -> None:
    def hit_limit(self: InotifyObserver) -> None:
        raise OSError(code, "inotify limit reached")

    monkeypatch.setattr(InotifyObserver, "start", hit_limit)
    _polls_and_sees(
        folder, folder / "doc.md", lambda told: re.search(rf"`sudo sysctl {sysctl}=\d+`", told)
    )


def test_no_inotify_instance_left_the_watcher_polls(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_instance() -> InotifyObserver:
        raise OSError(errno.EMFILE, "inotify instance limit reached")

    monkeypatch.setattr(observing, "Observer", no_instance)
    _polls_and_sees(
        folder, folder / "doc.md", lambda told: "fs.inotify.max_user_instances=" in told
    )


def test_a_folder_inotify_could_not_watch_is_polled(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # watchdog skips a folder below the watched one that it cannot watch, without a word.
    (folder / "sub").mkdir()
    refuse_watches(monkeypatch, folder / "sub")
    _polls_and_sees(
        folder, folder / "sub" / "doc.md", lambda told: "fs.inotify.max_user_watches=" in told
    )


def test_a_folder_made_after_the_watch_ran_out_is_polled(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    polling: list[str] = []
    watcher = _told(folder, polling)
    watcher.start()
    run = Running(watcher)
    try:
        assert watcher.polling is None
        refuse_watches(monkeypatch, folder / "later")
        (folder / "later").mkdir()
        wait_for(lambda: bool(polling), what="the switch to polling, told")
        assert polling == [watcher.polling]
        (folder / "later" / "doc.md").write_text("a prompt\n")
        assert run.next() == folder / "later" / "doc.md"
        (folder / "later" / "doc.md").write_text("rewritten in place\n")
        assert run.next() == folder / "later" / "doc.md"
    finally:
        run.close()


def test_known_files(folder: Path) -> None:
    tmp_path = folder.parent
    (folder / "sub").mkdir()
    (folder / "sub" / "deep.markdown").write_text("x\n")
    (folder / "doc.thinking.md").write_text("x\n")
    (folder / ".agentdoc").mkdir()
    (folder / ".agentdoc" / "state.md").write_text("x\n")
    (folder / "notes.txt").write_text("x\n")
    single = tmp_path / "single.md"
    single.write_text("x\n")
    watcher = Watcher([folder, single, tmp_path / "not-yet.md"], step=STEP, max_wait=MAX_WAIT)
    assert watcher.known_files() == sorted(
        [folder / "doc.md", folder / "sub" / "deep.markdown", single]
    )


def test_a_missing_root_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(AgentdocError, match="no such file or folder"):
        plan_roots([tmp_path / "nowhere" / "doc.md"])


@pytest.mark.parametrize(
    ("name", "ignored"),
    [
        ("notes/doc.md", False),
        ("notes/doc.markdown", False),
        ("notes/README.MD", False),
        ("notes/.hidden.md", False),
        ("notes/doc.txt", True),
        ("notes/.doc.md.swp", True),
        ("notes/.doc.md.swo", True),
        ("notes/4913", True),
        ("notes/doc.md~", True),
        ("notes/.#doc.md", True),
        ("notes/#doc.md#", True),
        ("notes/doc.md___jb_tmp___", True),
        ("notes/doc.md___jb_old___", True),
        ("notes/.doc.md.tmp", True),
        ("notes/.doc.md.tmp4711", True),
        ("notes/.subl5a1.tmp", True),
        ("notes/.agentdoc-tmp-abc123", True),
        ("notes/.agentdoc-tmp-abc123.md", True),
        ("notes/doc.thinking.md", True),
        ("notes/.agentdoc/doc.md", True),
        ("notes/.git/doc.md", True),
        ("notes/doc.sync-conflict-20261125-123404-ASALHUV.md", True),
        ("notes/doc (Ann's conflicted copy 2026-11-25).md", True),
        ("notes/doc.conflict1.md", True),
        ("notes/.stversions/doc~20261125-123404.md", True),
        ("notes/.stversions/doc.md", True),
        ("notes/.syncthing.doc.md.tmp", True),
        ("notes/.doc.md.icloud", True),
    ],
)
def test_is_ignored(name: str, ignored: bool) -> None:
    assert is_ignored(Path("/home/u") / name) is ignored


A, B, C = Path("/d/a.md"), Path("/d/b.md"), Path("/d/c.md")


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ({A: (1, 1, 1)}, {A: (1, 1, 1)}, []),
        ({A: (1, 1, 1)}, {A: (2, 1, 1)}, [A]),  # mtime
        ({A: (1, 1, 1)}, {A: (1, 2, 1)}, [A]),  # size
        ({A: (1, 1, 1)}, {A: (1, 1, 2)}, [A]),  # replaced by a rename-style save
        ({A: (1, 1, 1)}, {A: (1, 1, 1), B: (1, 1, 3)}, [B]),
        ({A: (1, 1, 1), C: (1, 1, 4)}, {A: (1, 1, 1)}, [C]),
    ],
)
def test_changed_paths(
    old: dict[Path, tuple[int, int, int]],
    new: dict[Path, tuple[int, int, int]],
    changed: list[Path],
) -> None:
    assert changed_paths(old, new) == changed


def _inotify_watches() -> set[int]:
    """The inodes this process's inotify instances watch (Linux's /proc says)."""
    inodes: set[int] = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            info = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        inodes |= {int(m, 16) for m in re.findall(r"^inotify wd:\S+ ino:([0-9a-f]+)", info, re.M)}
    return inodes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")
def test_agentdoc_state_and_repositories_take_no_watches(folder: Path) -> None:
    # Nothing reads their events, and a repository's folders would spend the watch limit.
    for sub in (".git/objects/ab", ".agentdoc", "notes/.git/refs", "notes/deeper"):
        (folder / sub).mkdir(parents=True)
    watcher = Watcher([folder], step=STEP, max_wait=MAX_WAIT)
    watcher.start()
    try:
        (folder / "later" / ".agentdoc").mkdir(parents=True)  # made while watched
        wait_for(lambda: (folder / "later").stat().st_ino in _inotify_watches(), what="a watch")
        watched = _inotify_watches()
        for sub in ("", "notes", "notes/deeper", "later"):
            assert (folder / sub).stat().st_ino in watched, sub
        for sub in (".git", ".git/objects/ab", ".agentdoc", "notes/.git", "later/.agentdoc"):
            assert (folder / sub).stat().st_ino not in watched, sub
    finally:
        watcher.stop()
