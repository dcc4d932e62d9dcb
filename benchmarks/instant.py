"""How soon things happen after a save: the first save of a long document, the first word.

Both use the replaying fake `claude` (see live.py): what is measured is agentdoc's part, and
each row has a baseline from the same run.

* `first/1M` vs `first/10K`: a daemon just started (its start-up walk done) on a folder holding
  a 1 MiB and a 10 KiB conversation; the first save of a prompt into each, timed to the start
  of the fake CLI. A fresh daemon per repetition, so every save is a first one.
* `first-word` vs `cli-line`: a turn whose fake CLI is held just before its first text line;
  the gate is opened and the time until the word is in the document is measured. Baseline:
  the same fake, alone, from the opened gate to its line on a pipe (the CLI's own time per
  printed line, which includes the fake's 10 ms polling of the gate).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
import uuid
from pathlib import Path

from core import FRONTMATTER, exchange
from live import POLL, TIMEOUT, FakeClaude, _Ends, _idle, install_fake, running
from measure import CheckFailed, Row, format_seconds, wait_until

from agentdoc.daemon import own_command
from agentdoc.daemon.service import Daemon
from agentdoc.turn.runner import TurnRunner

REPO = Path(__file__).resolve().parent.parent
LONG_STREAM = REPO / "tests" / "fixtures" / "transcripts" / "long_stream.ndjson"
LONG_AGO = 1_000_000_000  # an mtime that is not "used shortly before start-up"
SIZES = ((1024 * 1024, "1M"), (10 * 1024, "10K"))


def conversation(size: int) -> str:
    """A conversation of about `size` bytes that resumes a session of its own, as a long one
    does (two documents carrying one session are a document and its copy, merged, not run)."""
    head = FRONTMATTER.replace("agentdoc: {}", f"agentdoc: {{session: {uuid.uuid4()}}}")
    return head + "".join(exchange(i) for i in range(max(1, size // 2100))) + "## User\n\n"


def _first_saves(folder: Path, fake: FakeClaude, rep: int) -> dict[str, float]:
    docs = folder / f"rep-{rep}"
    docs.mkdir()
    paths = {}
    for size, label in SIZES:
        path = docs.resolve() / f"{label}.md"
        path.write_text(conversation(size), encoding="utf-8")
        os.utime(path, (LONG_AGO, LONG_AGO))
        paths[label] = path
    ends = _Ends()
    daemon = Daemon([docs], fake.settings(), environ=fake.env, on_progress=ends)
    took: dict[str, float] = {}
    with running(daemon):
        if not daemon.discovered.wait(TIMEOUT):
            raise CheckFailed("first: the daemon's start-up walk did not end")
        order = [label for _size, label in SIZES]
        for label in order if rep % 2 else reversed(order):
            path = paths[label]
            took[label] = _save(path, fake, f"first prompt of {label}")
            ends.wait_for(len(took))
            _wait_idle(daemon, path)
    return took


def _wait_idle(daemon: Daemon, doc: Path) -> None:
    wait_until(lambda: _idle(daemon, doc), TIMEOUT, POLL, "the turn's end")


def _save(doc: Path, fake: FakeClaude, prompt: str) -> float:
    calls = fake.call_count()
    text = doc.read_text(encoding="utf-8") + prompt + "\n"
    start = time.perf_counter()
    doc.write_text(text, encoding="utf-8")
    wait_until(lambda: fake.call_count() > calls, TIMEOUT, 0.001, "the turn to start")
    return time.perf_counter() - start


def bench_first_save(folder: Path, reps: int, check: bool) -> list[Row]:
    fake = install_fake(folder / "bin")
    runs = [_first_saves(folder, fake, rep) for rep in range(reps)]
    big, small = [r["1M"] for r in runs], [r["10K"] for r in runs]
    if check and fake.call_count() != 2 * reps:
        raise CheckFailed(f"first: {2 * reps} saves started {fake.call_count()} turns")
    extra = statistics.median(big) - statistics.median(small)
    return [
        Row(
            "first/1M",
            "daemon just started: first save → CLI start, 1 MiB",
            tuple(big),
            baseline="first/10K",
            note=f"{'+' if extra >= 0 else '-'}{format_seconds(abs(extra))} over 10 KiB",
        ),
        Row("first/10K", "daemon just started: first save → CLI start, 10 KiB", tuple(small)),
    ]


# --- the first word -----------------------------------------------------------------------


def _first_text_line() -> int:
    lines = LONG_STREAM.read_bytes().splitlines()
    return next(n for n, line in enumerate(lines) if b'"text_delta"' in line)


def _gated(fake: FakeClaude, gate: Path) -> dict[str, str]:
    return {
        **fake.env,
        "FAKE_CLAUDE_TRANSCRIPT": str(LONG_STREAM),
        "FAKE_CLAUDE_GATE": str(gate),
        "FAKE_CLAUDE_GATE_AT": str(_first_text_line()),
    }


def _first_word(folder: Path, fake: FakeClaude, rep: int) -> float:
    doc = folder / f"word-{rep}" / "chat.md"
    doc.parent.mkdir()
    doc.write_text(conversation(10 * 1024) + "tell me a long story\n", encoding="utf-8")
    gate = doc.parent / "gate"
    settings = fake.settings()
    runner = TurnRunner(doc, settings, clear=own_command(doc, settings), environ=_gated(fake, gate))
    thread = threading.Thread(target=runner.run, daemon=True)
    calls = fake.call_count()
    thread.start()
    try:
        wait_until(lambda: fake.call_count() > calls, TIMEOUT, POLL, "the CLI to start")
        time.sleep(0.3)  # untimed: lets the lines before the gate reach the runner
        start = time.perf_counter()
        gate.touch()
        wait_until(lambda: b"w0 " in doc.read_bytes(), TIMEOUT, 0.001, "the first word")
        return time.perf_counter() - start
    finally:
        gate.touch()
        thread.join(TIMEOUT)


def _cli_line(folder: Path, fake: FakeClaude, rep: int) -> float:
    gate = folder / f"gate-{rep}"
    proc = subprocess.Popen(
        [str(fake.executable), "-p"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_gated(fake, gate),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    for _ in range(_first_text_line()):
        proc.stdout.readline()
    time.sleep(0.3)  # untimed, as above: the fake is waiting at its gate
    start = time.perf_counter()
    gate.touch()
    proc.stdout.readline()
    took = time.perf_counter() - start
    proc.stdout.read()
    proc.wait(TIMEOUT)
    return took


def bench_first_word(folder: Path, reps: int, check: bool) -> list[Row]:
    fake = install_fake(folder / "bin")
    ours = [_first_word(folder, fake, rep) for rep in range(reps)]
    base = [_cli_line(folder, fake, rep) for rep in range(reps)]
    extra = statistics.median(ours) - statistics.median(base)
    return [
        Row(
            "first-word",
            "turn: CLI prints its first text → the word in the file",
            tuple(ours),
            baseline="cli-line",
            note=f"agentdoc's part {format_seconds(max(extra, 0.0))}",
        ),
        Row("cli-line", "the fake CLI alone: gate opened → its line on a pipe", tuple(base)),
    ]
