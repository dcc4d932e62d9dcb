"""`agentdoc watch` as a process on a generated vault: start-up time and idle CPU.

    .venv/bin/python benchmarks/vault.py [--notes 10000] [--idle 10] [--dir DIR]

Generates NOTES markdown notes (frontmatter, headings, nested folders, non-ASCII names) and
three session documents, starts the daemon (real watcher) and reports the wall time until it
logs that start-up is done, then the CPU time it uses over IDLE seconds of doing nothing. The
tree is made in a temporary folder (under --dir if given) and removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import checkout_env

FOLDERS = ("notes", "Projekte", "日記", "recettes-été", "archive/2019", "archive/2020/q3")
SESSION = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\n"
READY = "start-up done: "


def make_vault(root: Path, notes: int) -> None:
    for n in range(notes):
        name = f"größe-ñ-{n}.md" if n % 7 == 0 else f"note-{n}.md"
        path = root / FOLDERS[n % len(FOLDERS)] / f"sub{n % 23}" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: Note {n}\ntags: [t{n % 17}]\n---\n\n# Note {n}\n\nText [[x]].\n",
            encoding="utf-8",
        )
    for name in ("chat.md", "Projekte/plan.md", "日記/会話.md"):
        (root / name).write_text(SESSION, encoding="utf-8")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(root: Path, idle: float) -> tuple[float, float]:
    log = root.parent / "watch.log"
    env = checkout_env({**os.environ, "AGENTDOC_CLAUDE": "/bin/true"})
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentdoc", "-v", "watch", str(root)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        while READY not in log.read_text(errors="replace"):
            if proc.poll() is not None:
                raise SystemExit(
                    f"agentdoc watch exited with {proc.returncode}:\n{log.read_text()}"
                )
            time.sleep(0.05)
        ready = time.monotonic() - started
        before = cpu_seconds(proc.pid)
        time.sleep(idle)
        return ready, (cpu_seconds(proc.pid) - before) / idle
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        root = Path(scratch) / "vault"
        made = time.monotonic()
        make_vault(root, args.notes)
        print(f"vault: {args.notes} notes, made in {time.monotonic() - made:.1f} s")
        ready, cpu = measure(root, args.idle)
        print(f"start-up until ready: {ready:.2f} s")
        print(f"idle CPU over {args.idle:.0f} s: {100 * cpu:.1f} % of one core")


if __name__ == "__main__":
    main()
