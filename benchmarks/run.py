"""Run agentdoc's benchmarks and print one table of medians, spreads and same-run ratios.

    .venv/bin/python benchmarks/run.py [--quick] [--check] [--only NAME ...] [--dir FOLDER]

Speed and memory targets live here rather than in timed unit tests, which would fail on a slow
or busy machine. Every row is compared with a baseline measured in the same run (see
benchmarks/README.md). The exit status is 1 only when a benchmark could not run or, with
`--check`, measured the wrong thing; it never depends on how fast anything was.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import agents
import core
import daemon
import instant
import live
import peer
import scale
import searching
import snapshot
import warm
import watching
import web
from measure import CheckFailed, Failure, Row, render_table

log = logging.getLogger("benchmarks")


@dataclass(frozen=True)
class Reps:
    """How many times each benchmark repeats its measurement."""

    parse: int
    flush: int
    memory: int
    document: int
    turn: int
    saves: int
    stream: int
    idle: float  # seconds of idle daemon CPU measured per tree
    warm: int
    agents: int
    first: int  # daemons started for a first save, and first words timed


FULL = Reps(
    parse=21,
    flush=31,
    memory=5,
    document=21,
    turn=15,
    saves=20,
    stream=2,
    idle=10.0,
    warm=9,
    agents=5,
    first=7,
)
QUICK = Reps(
    parse=5,
    flush=7,
    memory=3,
    document=5,
    turn=3,
    saves=5,
    stream=1,
    idle=3.0,
    warm=3,
    agents=2,
    first=3,
)

# name -> (what it is, how to run it in a scratch folder)
Runner = Callable[[Path, Reps, bool], list[Row]]
BENCHMARKS: dict[str, tuple[str, Runner]] = {
    "parse": ("stream parsing", lambda _d, r, c: core.bench_parse(r.parse, c)),
    "flush": ("streamed flush", lambda d, r, c: core.bench_flush(d, r.flush, c)),
    "memory": ("flush memory", lambda d, r, c: core.bench_flush_memory(d, r.memory, c)),
    "document": ("document parse", lambda _d, r, c: core.bench_document(r.document, c)),
    "turn": ("one-shot turn", lambda d, r, c: live.bench_turn(d, r.turn, c)),
    "daemon": ("save→turn start", lambda d, r, c: live.bench_daemon(d, r.saves, c)),
    "startup": ("quick commands", lambda d, r, c: scale.bench_startup(d, r.turn, c)),
    "reparse": ("re-parse a save", lambda _d, r, c: scale.bench_reparse(r.document, c, BIG)),
    "stream": ("CPU per streamed delta", lambda d, r, c: watching.bench_stream(d, r.stream, c)),
    "tree": ("daemon on a tree", lambda d, r, c: watching.bench_tree(d, r.idle, c, BIG)),
    "warm": ("warm vs cold, real CLI", lambda d, r, c: warm.bench_warm(d, r.warm, c)),
    "agents": ("each agent's warm 2nd turn", lambda d, r, c: agents.bench_agents(d, r.agents, c)),
    "first": ("first save after start", lambda d, r, c: instant.bench_first_save(d, r.first, c)),
    "word": ("first word of a reply", lambda d, r, c: instant.bench_first_word(d, r.first, c)),
    "search": ("search 10,000 exchanges", lambda d, r, c: searching.bench_search(d, r.turn, c)),
    "watch": ("watch process, real CLI", lambda d, r, c: daemon.bench_daemon(d, r.first, c)),
    "pace": ("a turn at a model's pace", lambda d, r, c: daemon.bench_pace(d, r.first, c)),
    "peer": ("one-shot turn against agent-doc", lambda d, r, c: peer.bench_peer(d, r.first, c)),
    "many": ("24 documents at once", lambda d, r, c: daemon.bench_many(d, r.first, c)),
    "poll": ("idle --poll, 5,000 notes", lambda d, r, c: daemon.bench_poll(d, r.idle, c)),
    "web": ("the page: latency, CPU per delta", lambda d, r, c: web.bench_web(d, r.warm, c)),
    "snapshot": (
        "undo's snapshot of a tree",
        lambda d, r, c: snapshot.bench_snapshot(d, r.turn, c),
    ),
}
# Set by --big: also the 10 MB document (a markdown-it baseline of it takes seconds) and the
# 100,000-file tree.
BIG = False


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument(
        "--check", action="store_true", help="verify what each benchmark produced; exit 1 if wrong"
    )
    parser.add_argument(
        "--only", nargs="+", choices=sorted(BENCHMARKS), help="run only these benchmarks"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        help="where the scratch folder goes (default: the system temp folder); fsync costs "
        "depend on its filesystem, so point it where your documents live",
    )
    parser.add_argument("--big", action="store_true", help="also the 10 MB document (slow)")
    return parser.parse_args(argv)


def run_all(
    names: Sequence[str], folder: Path, reps: Reps, check: bool
) -> tuple[list[Row], list[Failure]]:
    rows: list[Row] = []
    failures: list[Failure] = []
    for name in names:
        what, runner = BENCHMARKS[name]
        scratch = folder / name
        scratch.mkdir()
        print(f"running {name} ({what})…", file=sys.stderr, flush=True)
        try:
            rows += runner(scratch, reps, check)
        except CheckFailed as exc:
            failures.append(Failure(name, str(exc)))
        except Exception as exc:  # one broken benchmark must not hide the others' results
            log.exception("%s failed", name)
            failures.append(Failure(name, f"{type(exc).__name__}: {exc}"))
    return rows, failures


def filesystem_of(path: Path) -> str:
    """The type of the filesystem holding `path` (Linux only; "unknown" elsewhere)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    return mount_type(mounts, os.path.realpath(path))


def mount_type(mounts: Sequence[str], path: str) -> str:
    """The filesystem type of the longest mount point that contains `path`."""
    best, kind = "", "unknown"
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and len(point) > len(best):
            best, kind = point, fields[2]
    return kind


def header(folder: Path, quick: bool, check: bool) -> str:
    mode = "quick" if quick else "full"
    return (
        f"agentdoc benchmarks ({mode}{', checked' if check else ''}) · "
        f"Python {platform.python_version()} · {platform.machine()} · "
        f"{os.cpu_count()} CPUs · scratch on {filesystem_of(folder)}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    global BIG
    BIG = args.big
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    names = [name for name in BENCHMARKS if not args.only or name in args.only]
    reps = QUICK if args.quick else FULL
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentdoc-bench-", dir=args.dir) as tmp:
        folder = Path(tmp)
        rows, failures = run_all(names, folder, reps, args.check)
        print(header(folder, args.quick, args.check))
    print()
    print(render_table(rows, failures))
    print()
    print(
        f"ratio = median ÷ median of the row named under `vs`, both from this run; "
        f"{time.monotonic() - started:.1f} s in all"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
