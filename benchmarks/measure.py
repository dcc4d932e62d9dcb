"""Timing helpers and the results table shared by every benchmark.

A benchmark yields `Row`s: the raw samples of one measurement plus the name of the row it is
compared with. Ratios are only ever taken between rows measured in the same run, so they carry
over from one machine to another where absolute times do not. Measured code and its baseline are
run in turn (A B A B ...) so that a machine that speeds up or slows down during the run moves both.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Unit = Literal["s", "B"]
# The checkout these benchmarks belong to: the agentdoc a child process runs is this one's, not
# whichever the interpreter has installed, so two checkouts can be measured against each other.
CHECKOUT = Path(__file__).resolve().parent.parent


def checkout_env(environ: dict[str, str]) -> dict[str, str]:
    """`environ` for a child that runs `python -m agentdoc`, with this checkout's package."""
    return {**environ, "PYTHONPATH": str(CHECKOUT)}


# Column headers and the width each column may take at most (the `what` text is cut to fit).
_HEADERS = ("name", "what", "median", "min", "max", "ratio", "vs", "note")
_WHAT_WIDTH = 52


class CheckFailed(Exception):
    """A benchmark measured something other than what it claims (wrong output, lost turn)."""


def installed(variable: str, local: Path, missing: str) -> str:
    """The program the environment `variable` names, else `local` if it is there."""
    configured = os.environ.get(variable)
    if configured:
        return configured
    if local.exists():
        return str(local)
    raise CheckFailed(missing)


@dataclass(frozen=True)
class Row:
    name: str
    what: str
    values: tuple[float, ...]
    unit: Unit = "s"
    baseline: str | None = None  # the name of the row this one is divided by
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.values)


@dataclass(frozen=True)
class Failure:
    name: str
    message: str


def clock(action: Callable[[], object]) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def alternate(
    actions: Sequence[Callable[[], object]],
    reps: int,
    warmup: int = 1,
    between: Callable[[], object] | None = None,
) -> list[list[float]]:
    """Time each action `reps` times, interleaved, after `warmup` untimed rounds.

    `between` runs untimed before every timed call, to give each the same starting point.
    """
    for _ in range(warmup):
        for action in actions:
            action()
    samples: list[list[float]] = [[] for _ in actions]
    for _ in range(reps):
        for index, action in enumerate(actions):
            if between is not None:
                between()
            samples[index].append(clock(action))
    return samples


def wait_until(predicate: Callable[[], bool], timeout: float, step: float, what: str) -> None:
    """Poll `predicate` every `step` seconds; CheckFailed after `timeout`."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(step)


# --- formatting (pure) ----------------------------------------------------------------------


def format_value(value: float, unit: Unit) -> str:
    if unit == "B":
        return format_bytes(value)
    return format_seconds(value)


def format_seconds(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def format_bytes(size: float) -> str:
    for limit, suffix in ((1 << 20, "MiB"), (1 << 10, "KiB")):
        if size >= limit:
            return f"{size / limit:.1f} {suffix}"
    return f"{size:.0f} B"


def ratio(row: Row, rows: Sequence[Row]) -> float | None:
    """Median of `row` over the median of its baseline row, if both are there."""
    base = next((r for r in rows if r.name == row.baseline), None)
    if base is None or base.median <= 0:
        return None
    return row.median / base.median


def table_cells(rows: Sequence[Row], failures: Sequence[Failure]) -> list[tuple[str, ...]]:
    cells: list[tuple[str, ...]] = []
    for row in rows:
        share = ratio(row, rows)
        cells.append(
            (
                row.name,
                _cut(row.what, _WHAT_WIDTH),
                format_value(row.median, row.unit),
                format_value(min(row.values), row.unit),
                format_value(max(row.values), row.unit),
                "" if share is None else f"{share:.2f}×",
                row.baseline or "",
                row.note,
            )
        )
    cells += [(f.name, f"ERROR: {f.message}", "", "", "", "", "", "") for f in failures]
    return cells


def render_table(rows: Sequence[Row], failures: Sequence[Failure] = ()) -> str:
    body = table_cells(rows, failures)
    widths = [max(len(line[i]) for line in (_HEADERS, *body)) for i in range(len(_HEADERS))]
    # Numbers read best right-aligned; names and notes left-aligned.
    right = {2, 3, 4, 5}
    lines = []
    for line in (_HEADERS, tuple("-" * w for w in widths), *body):
        padded = [
            cell.rjust(width) if index in right else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
