"""A one-shot turn against the nearest peer: `agentdoc run` beside `agent-doc run`.

agent-doc (a Rust tool on PyPI, pinned in the Makefile's `peer` target, installed into `.peer/`,
never into agentdoc's own environment) does the same work from the same kind of document: send
the new prompt to `claude -p`, write the reply back. Both run the real CLI against the offline
Messages API, which answers PACED text deltas PACE apart, as a model streams; one run of each
per repetition, alternated.

The figure is the CPU of the tool's own process (user + system), read from /proc when it has
exited and before it is reaped, so neither the CLI nor any other child is counted. agentdoc
streams the reply into the document as it comes; the peer writes it once, after the stream
ends. **Target:** `run/10K` ≤ 1.5× `peer/10K`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from core import FRONTMATTER
from daemon import PACE, PACED, _env, history
from measure import CheckFailed, Row, installed
from warm import REPO, find_claude
from watching import _cpu_seconds

from agentdoc.agents.fakeapi import FakeMessagesAPI

TIMEOUT = 120.0


def find_peer() -> str:
    return installed(
        "AGENTDOC_PEER",
        REPO / ".peer" / "bin" / "agent-doc",
        "the peer is not installed (`make peer`, or AGENTDOC_PEER)",
    )


def own_cpu(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    """CPU seconds of the process itself, without its children: read while it is a zombie."""
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        own = _cpu_seconds(proc.pid)  # utime + stime: the process alone, not its children
    finally:
        with contextlib.suppress(ProcessLookupError):  # what it left behind in its session
            os.killpg(proc.pid, signal.SIGKILL)
        err = proc.communicate(timeout=TIMEOUT)[1]
    if proc.returncode != 0:
        raise CheckFailed(f"{argv[0]} exited {proc.returncode}: {err.decode(errors='replace')}")
    return own


def bench_peer(folder: Path, reps: int, check: bool) -> list[Row]:
    claude, peer = find_claude(), find_peer()
    docs = folder / "docs"
    docs.mkdir()
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude)  # the peer runs `claude` from PATH
    subprocess.run(["git", "init", "-q"], cwd=docs, check=True)  # the peer keeps its state in git
    body = history(10 * 1024).removeprefix(FRONTMATTER)
    reply = {"content": [{"type": "text", "text": " ".join(f"p{i}" for i in range(PACED))}]}
    cpu: dict[str, list[float]] = {"run": [], "peer": []}
    with FakeMessagesAPI(default=reply, delta_delay=PACE) as api:
        env = _env(api, folder, claude)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
        for rep in range(reps):
            ours = docs / f"agentdoc-{rep}.md"
            ours.write_text(FRONTMATTER + body + "hello\n", encoding="utf-8")
            cpu["run"].append(
                own_cpu([sys.executable, "-m", "agentdoc", "run", str(ours)], env, docs)
            )
            theirs = docs / f"peer-{rep}.md"
            subprocess.run(
                [peer, "init", str(theirs), "Bench"],
                env=env,
                cwd=docs,
                check=True,
                capture_output=True,
            )
            with theirs.open("a", encoding="utf-8") as out:
                out.write("\n" + body + "hello\n")
            cpu["peer"].append(own_cpu([peer, "run", "--no-git", str(theirs)], env, docs))
            for doc in (ours, theirs):
                if check and f"p{PACED - 1}" not in doc.read_text(encoding="utf-8"):
                    raise CheckFailed(f"{doc.name}: the reply is not in the document")
    return [
        Row(
            "run/10K",
            f"`agentdoc run`'s own CPU, {PACED} deltas {PACE * 1000:.0f} ms apart, 10 KiB",
            tuple(cpu["run"]),
            baseline="peer/10K",
            note="target ≤ 1.5×; streams into the file",
        ),
        Row(
            "peer/10K",
            "`agent-doc run --no-git`'s own CPU, the same turn",
            tuple(cpu["peer"]),
            note="writes once, after the stream",
        ),
    ]
