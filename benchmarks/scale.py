"""Benchmarks of cost that must not grow with the document: start-up and re-parsing a save.

`startup/…`: a quick command as a whole process (`agentdoc --help`, `--version`, `status`)
against a bare interpreter start. `reparse/…`: parsing a save that changed only the last
turn of documents of 10 KB to 1 MB (10 MB with `--big`), after the daemon has parsed the
document once, against a plain markdown-it parse of the same text.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core import FRONTMATTER, exchange
from markdown_it import MarkdownIt
from measure import CheckFailed, Row, alternate, checkout_env

from agentdoc.document import parse

SIZES = ((10 * 1024, "10K"), (100 * 1024, "100K"), (1024 * 1024, "1M"))
BIG = ((10 * 1024 * 1024, "10M"),)


def _command(args: list[str], cwd: Path) -> Callable[[], None]:
    # The bare interpreter gets the same environment: the row to beat pays the same path search.
    env = checkout_env(dict(os.environ))

    def run() -> None:
        subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    return run


def bench_startup(folder: Path, reps: int, check: bool) -> list[Row]:
    cli = [sys.executable, "-m", "agentdoc"]
    cases = (["--help"], ["--version"], ["status"])
    actions = [_command([sys.executable, "-c", "pass"], folder)]
    actions += [_command([*cli, *case], folder) for case in cases]
    timings = alternate(actions, reps)
    rows = [
        Row(f"startup/{case[0]}", f"agentdoc {case[0]}, whole process", tuple(t), baseline="python")
        for case, t in zip(cases, timings[1:], strict=True)
    ]
    return [*rows, Row("python", "python -c pass, whole process", tuple(timings[0]))]


def _saver(saves: list[str]) -> Callable[[], None]:
    """Parse the saves in turn, as the daemon parses each settled save of one document."""
    count = [0]

    def save() -> None:
        count[0] += 1
        parse(saves[count[0] % len(saves)])

    return save


def _md_it(commonmark: MarkdownIt, text: str) -> Callable[[], object]:
    return lambda: commonmark.parse(text)


def bench_reparse(reps: int, check: bool, big: bool) -> list[Row]:
    rows: list[Row] = []
    commonmark = MarkdownIt("commonmark")
    for size, label in SIZES + (BIG if big else ()):
        body = FRONTMATTER + "".join(exchange(i) for i in range(max(1, size // 2100)))
        saves = [f"{body}## User\n\nquestion, save {n}\n" for n in range(2)]
        parse(saves[0])
        ours, base = alternate([_saver(saves), _md_it(commonmark, saves[0])], reps)
        if check and parse(saves[1]).pending_prompt() != "question, save 1":
            raise CheckFailed(f"reparse/{label}: the pending prompt was not found")
        rows += [
            Row(
                f"reparse/{label}",
                "parse of a save that changed the last turn",
                tuple(ours),
                baseline=f"md-it/{label}",
                note=f"document {len(saves[0]) / 1024:,.0f} KiB",
            ),
            Row(f"md-it/{label}", 'MarkdownIt("commonmark").parse, whole text', tuple(base)),
        ]
    return rows
