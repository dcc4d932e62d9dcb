"""Benchmarks of cost that must not grow with the folder or the document: the watching daemon
on trees of plain notes, and the CPU a streamed turn costs per delta on long documents.

`tree/…`: `agentdoc watch` as a process on a tree of N plain markdown files (100 per folder):
start to ready, start to the end of the first walk, CPU while idle, and RSS. Baseline: one bare
`os.scandir` walk of the same tree, timed in the same run. `stream/…`: the process CPU of a
whole `TurnRunner` turn (2000 paced deltas from the fake `claude`) on documents of 10 KB to
1 MB, per delta. Baseline: a plain `Path.write_bytes` of the same document once per flush the
turn made, per delta.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import FRONTMATTER, exchange
from live import REPO, install_fake
from measure import CheckFailed, Row, checkout_env, wait_until

from agentdoc.daemon import own_command
from agentdoc.document import parse
from agentdoc.turn.runner import TurnRunner
from agentdoc.turn.writer import ReplyWriter

TREES = (1_000, 10_000)
BIG_TREE = 100_000
PER_FOLDER = 100
STREAM_SIZES = ((10 * 1024, "10K"), (100 * 1024, "100K"), (1024 * 1024, "1M"))
LONG_STREAM = REPO / "tests" / "fixtures" / "transcripts" / "long_stream.ndjson"
DELTAS = 2000
LINE_DELAY = "0.002"  # paces the fake CLI, so a turn makes flushes as a real one does
CLK_TCK = os.sysconf("SC_CLK_TCK")


def make_tree(top: Path, files: int) -> None:
    for n in range(files):
        folder = top / f"d{n // PER_FOLDER // 100:03d}" / f"s{n // PER_FOLDER:04d}"
        if n % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        (folder / f"note{n}.md").write_text(f"# note {n}\n\nplain text, no frontmatter\n")


def bare_walk(top: Path) -> int:
    """Every entry of the tree, as `os.scandir` lists it: the least any walk can cost."""
    count, pending = 0, [str(top)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                count += 1
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return count


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def _rss_bytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) * 1024
    return 0.0


def _watch(top: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(top.parent / "home")}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "agentdoc", "-v", "watch", str(top)],
            env=checkout_env(env),
            cwd=top,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def bench_tree(folder: Path, idle: float, check: bool, big: bool) -> list[Row]:
    rows: list[Row] = []
    for files in (*TREES, *((BIG_TREE,) if big else ())):
        label = f"{files // 1000}k"
        top = folder / f"tree-{label}" / "notes"
        make_tree(top, files)
        walked = time.perf_counter()
        entries = bare_walk(top)
        walk = time.perf_counter() - walked
        if check and entries < files:
            raise CheckFailed(f"tree/{label}: the walk saw {entries} entries for {files} files")
        rows += _measure_daemon(top, label, walk, idle)
        rows.append(Row(f"walk/{label}", f"bare os.scandir walk, {files:,} files", (walk,)))
    return rows


def _measure_daemon(top: Path, label: str, walk: float, idle: float) -> list[Row]:
    log = top.parent / "watch.log"
    started = time.perf_counter()
    proc = _watch(top, log)
    try:
        wait_until(lambda: b": watching " in log.read_bytes(), 60, 0.005, "ready")
        ready = time.perf_counter() - started
        wait_until(lambda: b"start-up done" in log.read_bytes(), 600, 0.01, "the first walk")
        done = time.perf_counter() - started
        cpu_before = _cpu_seconds(proc.pid)
        time.sleep(idle)  # the measurement: what the daemon costs while nothing happens
        per_second = (_cpu_seconds(proc.pid) - cpu_before) / idle
        rss = _rss_bytes(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    base = f"walk/{label}"
    return [
        Row(f"tree/{label}/ready", "agentdoc watch: start to ready", (ready,), baseline=base),
        Row(
            f"tree/{label}/walked",
            "agentdoc watch: start to first walk done",
            (done,),
            baseline=base,
        ),
        Row(
            f"tree/{label}/idle",
            f"CPU s per s while idle, over {idle:.0f} s",
            (per_second,),
            baseline=base,
            note=f"{per_second * 100:.2f} % of a core",
        ),
        Row(f"tree/{label}/rss", "agentdoc watch RSS after the walk", (rss,), unit="B"),
    ]


class _CountedFlushes:
    """Counts the writes a turn makes (open, flushes, close) by wrapping the writer."""

    def __init__(self) -> None:
        self.count = 0
        self._real = ReplyWriter.update

    def __enter__(self) -> _CountedFlushes:
        real, counter = self._real, self

        def update(writer: ReplyWriter, *args: object, **kwargs: object) -> None:
            counter.count += 1
            real(writer, *args, **kwargs)  # type: ignore[arg-type]

        ReplyWriter.update = update  # type: ignore[method-assign,assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        ReplyWriter.update = self._real  # type: ignore[method-assign]


def bench_stream(folder: Path, reps: int, check: bool) -> list[Row]:
    fake = install_fake(folder / "bin")
    env = {**fake.env, "FAKE_CLAUDE_TRANSCRIPT": str(LONG_STREAM), "FAKE_CLAUDE_DELAY": LINE_DELAY}
    rows: list[Row] = []
    for size, label in STREAM_SIZES:
        text = FRONTMATTER + "".join(exchange(i) for i in range(max(1, size // 2100)))
        ours: list[float] = []
        base: list[float] = []
        for rep in range(reps):
            doc = folder / f"{label}-{rep}" / "chat.md"
            doc.parent.mkdir()
            doc.write_text(f"{text}## User\n\ntell me a long story\n", encoding="utf-8")
            # The daemon has parsed the document once already when it starts a turn.
            parse(doc.read_text(encoding="utf-8"))
            settings = fake.settings()
            runner = TurnRunner(doc, settings, clear=own_command(doc, settings), environ=env)
            with _CountedFlushes() as writes:
                cpu = time.process_time()
                state = runner.run().state
                ours.append((time.process_time() - cpu) / DELTAS)
            if check and (state != "done" or "w1999" not in doc.read_text(encoding="utf-8")):
                raise CheckFailed(f"stream/{label}: the turn ended {state} without its reply")
            data = doc.read_bytes()
            plain = doc.with_name("plain.md")
            cpu = time.process_time()
            for _ in range(writes.count):
                plain.write_bytes(data)
            base.append((time.process_time() - cpu) / DELTAS)
        rows += [
            Row(
                f"stream/{label}",
                "turn CPU per streamed delta (2000 deltas, paced)",
                tuple(ours),
                baseline=f"write/{label}",
                note=f"document {len(text) / 1024:,.0f} KiB",
            ),
            Row(f"write/{label}", "plain write_bytes once per flush, per delta", tuple(base)),
        ]
    return rows
