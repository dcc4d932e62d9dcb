"""A warm CLI's stdout read in batches while a reply streams, line by line after a quiet spell."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentdoc.agents.claude import output


class Clock:
    """A clock the chunks' arrival moves, and the reader's waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    made = Clock()
    monkeypatch.setattr("agentdoc.agents.claude.output.time.monotonic", made.monotonic)
    monkeypatch.setattr("agentdoc.agents.claude.output.time.sleep", made.sleep)
    return made


def arriving(clock: Clock, gaps: list[float]) -> Iterator[bytes]:
    for n, gap in enumerate(gaps):
        clock.now += gap
        yield b"line %d\n" % n


def test_a_stream_is_read_in_batches_after_its_first_lines(clock: Clock) -> None:
    gaps = [5.0] + [0.001] * 9  # a reply starts after a quiet spell, then streams
    chunks = list(output.paced(arriving(clock, gaps), pace=0.02, burst=4))
    assert chunks == [b"line %d\n" % n for n in range(10)]  # nothing lost or reordered
    # The first lines at once; from the burst on, a pause before each read.
    assert clock.waits == [0.02] * 6


def test_lines_far_apart_are_each_read_at_once(clock: Clock) -> None:
    chunks = list(output.paced(arriving(clock, [0.5] * 6), pace=0.02))
    assert len(chunks) == 6 and clock.waits == []


def test_a_reply_well_under_way_is_read_further_apart_until_a_quiet_spell(clock: Clock) -> None:
    gaps = [5.0] + [0.001] * 24 + [1.0] + [0.001] * 5
    chunks = list(output.paced(arriving(clock, gaps), pace=0.02, burst=4, steady=16))
    assert len(chunks) == len(gaps)
    steady = 0.02 * output.STEADY_PACES
    # Twelve reads at the first pace, then the steady one; a quiet spell starts over.
    assert clock.waits == [0.02] * 12 + [steady] * 9 + [0.02] * 2


def test_a_pipe_filling_faster_than_the_pace_is_read_without_waiting(clock: Clock) -> None:
    """A multi-megabyte reply or a big tool output: each read comes back full, and waiting
    before the next would hold the agent up on a full pipe."""

    def full(n: int) -> Iterator[bytes]:
        for _ in range(n):
            clock.now += 0.001
            yield b"x" * output.BACKLOG

    chunks = list(output.paced(full(40), pace=0.02, burst=4, steady=16))
    assert len(chunks) == 40 and clock.waits == []
