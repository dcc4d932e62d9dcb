"""The benchmarks still run: a rename in the package must fail here, not silently in a benchmark
that nobody runs until the numbers are wanted.

Only cheap rows, `--quick --check`: whether each row measured what it claims, never its speed.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.paths import REPO_ROOT

# Rows that need no real agent and take a few seconds each, covering the stream parser, the
# document parser, a whole turn, a turn's streamed writes, and the daemon from a save (a first
# one, of a long conversation, too) to the agent's start.
CHEAP = ("parse", "document", "turn", "stream", "daemon", "first")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(
        [sys.executable, *argv], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_cheap_rows_of_the_runner_measure_what_they_claim() -> None:
    done = run("benchmarks/run.py", "--quick", "--check", "--only", *CHEAP)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert {"parse", "document", "turn", "stream/1M", "save→turn", "first/1M"} <= rows, done.stdout


def test_hops_follows_a_save_to_its_reply() -> None:
    done = run("benchmarks/hops.py")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.startswith("window"), done.stdout
