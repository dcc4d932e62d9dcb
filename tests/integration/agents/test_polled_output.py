"""Reading a CLI's memory-file stdout on the turn's own thread (no processes: the test writes)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from agentdoc.agents.claude import output
from agentdoc.agents.claude.output import MemoryOutput, PolledLines

pytestmark = pytest.mark.skipif(
    not output.memory_files_supported(), reason="memory files are Linux-only"
)


class Child:
    """Stands in for the CLI: writes into the memory file and says when it has exited."""

    def __init__(self) -> None:
        self.memory = MemoryOutput("test-stdout")
        self.exited = False

    def write(self, data: bytes) -> None:
        os.write(self.memory.fd, data)


@pytest.fixture
def child() -> Iterator[Child]:
    made = Child()
    yield made
    made.memory.close()


def test_lines_come_a_read_at_a_time_without_blanks_or_partial_lines(child: Child) -> None:
    lines = PolledLines(child.memory, lambda: child.exited)
    child.write(b'{"a":1}\n\n{"b":2}\r\n{"c"')
    assert lines.next_batch(0) == [b'{"a":1}', b'{"b":2}']
    assert lines.next_batch(0) is None  # the partial line waits for its end
    child.write(b":3}\n")
    assert lines.next_batch(0) == [b'{"c":3}']


def test_the_exit_ends_with_what_was_written_before_it(child: Child) -> None:
    lines = PolledLines(child.memory, lambda: child.exited)
    child.write(b"first\nlast without end")
    child.exited = True
    assert lines.next_batch(0) == [b"first", b"last without end", b""]
    assert lines.next_batch(0) == [b""]  # and stays ended


def test_waiting_times_out_with_nothing_and_close_ends_it(child: Child) -> None:
    lines = PolledLines(child.memory, lambda: child.exited)
    assert lines.next_batch(0.03) is None
    lines.close()
    child.write(b"after close\n")
    assert lines.next_batch(5) == [b""]  # a closed reader never touches the file again


def test_steady_output_spaces_the_looks_out_and_a_quiet_look_resets_them(child: Child) -> None:
    lines = PolledLines(child.memory, lambda: child.exited)
    original_wait = lines._ended.wait

    def write_while_waiting(timeout: float | None = None) -> bool:
        child.write(b"more\n")
        return original_wait(0)

    lines._ended.wait = write_while_waiting  # type: ignore[method-assign]
    for _ in range(4):
        assert lines.next_batch(1) == [b"more"]
    assert lines._interval == output.STEADY_POLL
    lines._ended.wait = lambda timeout=None: original_wait(0)  # type: ignore[method-assign]
    assert lines.next_batch(0.001) is None
    assert lines._interval == output.POLL
