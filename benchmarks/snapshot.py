"""What recording a turn's files costs: a second snapshot of an unchanged 10,000-file tree.

`snapshot/10k`: `snapshots.before_turn` as a turn calls it (the git processes it starts
included) on a tree of 10,000 small files in 100 folders, after a first snapshot, against
`git status` of the same tree, which is a repository of its own: what git itself takes to look
at it.
The target is 200 ms at most; the note gives the first snapshot's time, which writes every file.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from measure import CheckFailed, Row, alternate, clock

from agentdoc.records import snapshots

FILES = 10_000


def make_tree(folder: Path, files: int = FILES) -> None:
    for n in range(files):
        sub = folder / f"dir{n % 100:03d}"
        sub.mkdir(exist_ok=True)
        (sub / f"file{n:05d}.txt").write_text(f"file {n}\n" * 4)
    (folder / ".gitignore").write_text("*.log\n")


def _git_status(folder: Path) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=folder, stdout=subprocess.DEVNULL, check=True
        )

    return run


def bench_snapshot(folder: Path, reps: int, check: bool) -> list[Row]:
    # One tree for both: it is a repository of its own too, as a project usually is.
    tree = folder / "tree"
    tree.mkdir()
    make_tree(tree)
    document = tree / "chat.md"
    document.write_text("---\nagentdoc: {}\n---\n")
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tree, check=True)
    env = {**os.environ, "AGENTDOC_STATE_DIR": str(folder / "state")}

    turns = iter(range(1, 1_000_000))

    def snapshot() -> None:  # each time the next turn, as a conversation goes on
        snapshots.before_turn(document, next(turns), tree, (), env)

    first = clock(snapshot)
    ours, base = alternate([snapshot, _git_status(tree)], reps)
    if check:
        shadow = snapshots.shadow_for(document, env)
        record = max(snapshots.read_record(shadow).items())[1][0]
        assert record.before is not None
        listed = subprocess.run(
            ["git", f"--git-dir={shadow.git_dir}", "ls-tree", "-r", "--name-only", record.before],
            capture_output=True,
            check=True,
            text=True,
        ).stdout.split()
        if len(listed) != FILES + 1:  # the files and the .gitignore, not the document
            raise CheckFailed(f"snapshot/10k: the tree holds {len(listed)} files, not {FILES + 1}")
    return [
        Row(
            "snapshot/10k",
            "2nd snapshot of an unchanged 10,000-file tree",
            tuple(ours),
            baseline="git-status/10k",
            note=f"target ≤ 200 ms; first snapshot {first * 1000:,.0f} ms",
        ),
        Row("git-status/10k", "git status --porcelain, same tree, own repo", tuple(base)),
    ]
