"""`agentdoc search` over 10,000 exchanges: the whole command as a process, and its query.

100 documents of 80 exchanges, each with an archive of 20 more (10,000 exchanges of about 2 KB,
20 MB of text), indexed once before timing. `search/process`: `agentdoc search WORD FOLDER` as
a whole process, the index current (so its own look at the folder is a stat per file), against
a bare interpreter start. `search/query`: the same search in this process (open the index,
look at the files, query, pick each hit's line): what the command costs beyond starting up.
The word occurs in 10 exchanges, so the rows measure finding them, not printing thousands.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core import FRONTMATTER, exchange
from measure import CheckFailed, Row, alternate, checkout_env

from agentdoc.search import connect, key, refresh, search

DOCUMENTS = 100
IN_DOCUMENT = 80
IN_ARCHIVE = 20
RARE = "zanzibar"


def _exchange(number: int) -> str:
    text = exchange(number)
    return text.replace("Question", f"Question about {RARE}", 1) if number % 1000 == 7 else text


def build(folder: Path) -> Path:
    top = folder / "search-tree"
    top.mkdir()
    per = IN_DOCUMENT + IN_ARCHIVE
    for doc in range(DOCUMENTS):
        first = doc * per
        archived = "".join(_exchange(first + i) for i in range(IN_ARCHIVE))
        (top / f"chat-{doc}.archive.md").write_text(archived, encoding="utf-8")
        head = FRONTMATTER.replace("agentdoc: {}", f"agentdoc: {{archived: {IN_ARCHIVE}}}")
        kept = "".join(_exchange(first + i) for i in range(IN_ARCHIVE, per))
        (top / f"chat-{doc}.md").write_text(head + kept + "## User\n\n", encoding="utf-8")
    return top


def _process(args: list[str], env: dict[str, str], out: list[bytes]) -> Callable[[], None]:
    def run() -> None:
        done = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out.append(done.stdout)

    return run


def bench_search(folder: Path, reps: int, check: bool) -> list[Row]:
    state = folder / "search-state"
    env = checkout_env({**os.environ, "AGENTDOC_STATE_DIR": str(state)})
    # As installed: compiled once, not at every start (the untimed first round compiles).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["AGENTDOC_STATE_DIR"] = str(state)  # this process's queries use the same index
    top = build(folder)
    conn = connect()
    refresh(conn, [top])  # indexing is not what is timed
    found: list[int] = []

    def query() -> None:
        c = connect()
        refresh(c, [top])
        found.append(len(search(c, RARE, [key(top)])))
        c.close()

    out: list[bytes] = []
    actions = [
        _process([sys.executable, "-c", "pass"], env, []),
        _process([sys.executable, "-m", "agentdoc", "search", RARE, str(top)], env, out),
        query,
    ]
    bare, process, in_process = alternate(actions, reps)
    expected = DOCUMENTS * (IN_DOCUMENT + IN_ARCHIVE) // 1000
    if check and (set(found) != {expected} or {o.count(b"\n") for o in out} != {expected}):
        raise CheckFailed(f"search: expected {expected} hits, got {set(found)} in process")
    exchanges = conn.execute("SELECT count(*) FROM exchanges").fetchone()[0]
    conn.close()
    extra = (sorted(process)[len(process) // 2] - sorted(bare)[len(bare) // 2]) * 1000
    return [
        Row("search/python", "python -c pass, whole process", tuple(bare)),
        Row(
            "search/process",
            f"agentdoc search, whole process, {exchanges:,} exchanges",
            tuple(process),
            baseline="search/python",
            note=f"{extra:.0f} ms over the interpreter",
        ),
        Row("search/query", "the same search in process", tuple(in_process), note="diagnostic"),
    ]
