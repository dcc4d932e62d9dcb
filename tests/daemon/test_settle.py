"""Settling on a fake clock, and reading files that are mid-save."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentdoc.daemon.watch import settle
from agentdoc.daemon.watch.settle import Settler, read_stable

A = Path("/docs/a.md")
B = Path("/docs/b.md")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True)
class Case:
    name: str
    touches: list[tuple[float, Path]]  # (time, path)
    # (time, paths ready at that time); checked in order, each pops what it returns
    expect: list[tuple[float, list[Path]]]


CASES = [
    Case("single event", [(0.0, A)], [(0.5, []), (0.99, []), (1.0, [A]), (5.0, [])]),
    Case(
        "burst shorter than max_wait settles after the last touch",
        [(0.0, A), (0.5, A), (1.2, A)],
        [(1.5, []), (2.1, []), (2.2, [A])],
    ),
    Case(
        "burst longer than max_wait is cut at max_wait",
        [(t * 0.5, A) for t in range(12)],  # every 0.5 s for 5.5 s, never quiet for 1 s
        [(3.99, []), (4.0, [A])],
    ),
    Case(
        "two paths settle independently",
        [(0.0, A), (0.5, B), (0.9, A)],
        [(1.5, [B]), (1.9, [A])],
    ),
    Case(
        "ready in first-touch order",
        [(0.0, B), (0.1, A), (0.1, B)],
        [(1.1, [B, A])],
    ),
    Case(
        "a touch after settling starts a new burst",
        [(0.0, A), (1.0, A)],
        [(2.0, [A]), (3.0, [])],
    ),
]


def _run(case: Case, settler: Settler, clock: FakeClock) -> list[tuple[float, list[Path]]]:
    events = sorted(
        [(t, 0, p) for t, p in case.touches] + [(t, 1, None) for t, _ in case.expect],
        key=lambda item: (item[0], item[1]),
    )
    seen: list[tuple[float, list[Path]]] = []
    for at, kind, path in events:
        clock.now = at
        if kind == 0 and path is not None:
            settler.touch(path)
        elif kind == 1:
            seen.append((at, settler.ready()))
    return seen


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_settler(case: Case) -> None:
    clock = FakeClock()
    settler = Settler(step=1.0, max_wait=4.0, clock=clock)
    assert _run(case, settler, clock) == case.expect


@pytest.mark.parametrize(
    ("touches", "now", "expected"),
    [
        ([], 0.0, None),
        ([(0.0, A)], 0.25, 0.75),
        ([(0.0, A), (0.5, B)], 0.5, 0.5),  # A is due first
        ([(0.0, A)], 3.0, 0.0),  # overdue: ready now, never negative
        ([(t * 0.5, A) for t in range(8)], 3.5, 0.5),  # max_wait (4.0) beats step (4.5)
    ],
)
def test_next_deadline(
    touches: list[tuple[float, Path]], now: float, expected: float | None
) -> None:
    clock = FakeClock()
    settler = Settler(step=1.0, max_wait=4.0, clock=clock)
    for at, path in touches:
        clock.now = at
        settler.touch(path)
    clock.now = now
    assert settler.next_deadline() == expected


def test_next_deadline_is_none_once_everything_is_popped() -> None:
    clock = FakeClock()
    settler = Settler(step=1.0, max_wait=4.0, clock=clock)
    settler.touch(A)
    clock.now = 1.0
    assert settler.ready() == [A]
    assert settler.next_deadline() is None
    assert not settler.pending()


# -- saves the kernel reports complete (close-write, a rename into place) --------------------

M, C = "m", "c"  # an event of a save in progress, an event that completed a write


@dataclass(frozen=True)
class CompleteCase:
    name: str
    touches: list[tuple[float, Path, str]]  # (time, path, M or C)
    expect: list[tuple[float, list[Path]]]


# Times are multiples of 1/8 s, exact in binary, so sums land exactly on the boundaries.
COMPLETE_CASES = [
    CompleteCase(
        "a completed save is ready after the guard, not the quiet step",
        [(0.0, A, M), (0.25, A, C)],
        [(0.375, []), (0.5, [A]), (2.0, [])],
    ),
    CompleteCase(
        "an event after the completion means more is coming: the quiet step again",
        [(0.0, A, C), (0.125, A, M)],
        [(0.5, []), (1.0, []), (1.125, [A])],
    ),
    CompleteCase(
        "an editor writing twice within the guard is ready once, after its second write",
        [(0.0, A, C), (0.125, A, M), (0.25, A, C)],
        [(0.25, []), (0.375, []), (0.5, [A]), (2.0, [])],
    ),
    CompleteCase(
        "a save soon after a completed one is a burst: it waits for quiet",
        [(0.0, A, C), (0.5, A, M), (0.75, A, C), (1.0, A, C)],
        [(0.25, [A]), (1.5, []), (1.875, []), (2.0, [A])],
    ),
    CompleteCase(
        "after the burst has been quiet for a step, a save is quick again",
        [(0.0, A, C), (0.5, A, C), (3.0, A, C)],
        [(0.25, [A]), (1.5, [A]), (3.25, [A])],
    ),
    CompleteCase(
        "a completion of one path does not hurry another",
        [(0.0, B, M), (0.125, A, C)],
        [(0.375, [A]), (0.875, []), (1.0, [B])],
    ),
]


@pytest.mark.parametrize("case", COMPLETE_CASES, ids=[c.name for c in COMPLETE_CASES])
def test_completed_saves(case: CompleteCase) -> None:
    clock = FakeClock()
    settler = Settler(step=1.0, max_wait=4.0, clock=clock, guard=0.25)
    events = sorted(
        [(t, 0, p, kind) for t, p, kind in case.touches]
        + [(t, 1, None, "") for t, _ in case.expect],
        key=lambda item: (item[0], item[1]),
    )
    seen: list[tuple[float, list[Path]]] = []
    for at, what, path, kind in events:
        clock.now = at
        if what == 0 and path is not None:
            settler.touch(path, complete=kind == C)
        elif what == 1:
            seen.append((at, settler.ready()))
    assert seen == case.expect


def test_without_a_guard_completions_are_not_trusted() -> None:
    clock = FakeClock()
    settler = Settler(step=1.0, max_wait=4.0, clock=clock)  # polling, other platforms
    settler.touch(A, complete=True)
    clock.now = 0.5
    assert settler.ready() == []
    clock.now = 1.0
    assert settler.ready() == [A]


def test_negative_times_are_rejected() -> None:
    with pytest.raises(ValueError, match="negative"):
        Settler(step=-1.0, max_wait=1.0)
    with pytest.raises(ValueError, match="negative"):
        Settler(step=1.0, max_wait=1.0, guard=-0.1)


def test_read_stable_returns_content(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"hello\n")
    assert read_stable(doc) == b"hello\n"


def test_read_stable_stays_missing(tmp_path: Path) -> None:
    assert read_stable(tmp_path / "gone.md", attempts=3, pause=0.001) is None


def test_read_stable_stays_empty(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"")
    assert read_stable(doc, attempts=3, pause=0.001) == b""


def _after_first_attempt(
    monkeypatch: pytest.MonkeyPatch, action: Callable[[], object]
) -> threading.Thread:
    """Run `action` in a thread right after read_stable's first attempt, which waits for it."""
    first_attempt = threading.Event()
    done = threading.Event()
    real = settle._read_once

    def spy(path: Path) -> tuple[bytes, bool]:
        try:
            return real(path)
        finally:
            if not first_attempt.is_set():
                first_attempt.set()
                done.wait(timeout=5)

    def act() -> None:
        if first_attempt.wait(timeout=5):
            action()
        done.set()

    monkeypatch.setattr(settle, "_read_once", spy)
    thread = threading.Thread(target=act)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, b"new version\n"),  # a rename-style save between its unlink and its create
        (b"", b"filled\n"),  # an in-place save between its truncate and its write
    ],
)
def test_read_stable_waits_for_the_save_to_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: bytes | None, after: bytes
) -> None:
    doc = tmp_path / "doc.md"
    if before is not None:
        doc.write_bytes(before)
    thread = _after_first_attempt(monkeypatch, lambda: doc.write_bytes(after))
    try:
        assert read_stable(doc, attempts=5, pause=0.001) == after
    finally:
        thread.join(timeout=5)


def test_read_stable_retries_when_the_file_changes_during_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "doc.md"
    doc.write_bytes(b"torn")
    real_read = Path.read_bytes
    reads = 0

    def read_then_save_lands(self: Path) -> bytes:
        nonlocal reads
        reads += 1
        data = real_read(self)
        if reads == 1:  # the editor's save completes between the read and the second stat
            doc.write_bytes(b"whole version\n")
        return data

    monkeypatch.setattr(Path, "read_bytes", read_then_save_lands)
    assert read_stable(doc, attempts=5, pause=0.001) == b"whole version\n"
    assert reads == 2
