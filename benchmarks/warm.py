"""Warm sessions against cold turns, with the real Claude Code CLI and the offline API.

The one benchmark that needs the real CLI (`node_modules/.bin/claude` after `make install`, or
`$AGENTDOC_CLAUDE`); without it, it reports that it could not run. Both modes run the same
daemon on the same offline Messages API in one run, alternating: each repetition is a fresh
document whose first turn starts its CLI, and the measured figure is its **second** turn, from
the save to the moment the API receives that turn's request. The settle window (the quiet step
the daemon waits after a save) is part of both; the note shows what is left once it is taken
out, which is the CLI's part (plus agentdoc's own reading and writing).

RSS: the resident memory of the warm CLIs (and the daemon's own) with N documents warm.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from live import DOC, SETTLE_MAX, SETTLE_STEP, TIMEOUT, _Ends, _idle, running
from measure import CheckFailed, Row, alternate, wait_until

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.daemon.service import Daemon

REPO = Path(__file__).resolve().parent.parent
WARM_DOCS = 4  # documents kept warm for the memory figure (the default `warm_sessions`)


def find_claude() -> str:
    configured = os.environ.get("AGENTDOC_CLAUDE")
    local = REPO / "node_modules" / ".bin" / "claude"
    if configured:
        return configured
    if local.exists():
        return str(local)
    raise CheckFailed("the real Claude CLI is not installed (`make install`, or AGENTDOC_CLAUDE)")


def _env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "sk-bench",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }


class _Mode:
    """One daemon (warm or cold) over its own folder; `second_turn()` measures one document."""

    def __init__(self, folder: Path, api: FakeMessagesAPI, claude: str, warm: bool) -> None:
        self.folder = folder
        self.api = api
        self.docs = folder / "docs"
        self.docs.mkdir(parents=True)
        home = folder / "home"
        home.mkdir()
        settings = Settings(
            claude=claude,
            settle_step=SETTLE_STEP,
            settle_max=SETTLE_MAX,
            warm_sessions=WARM_DOCS if warm else 0,
        )
        self.ends = _Ends()
        self.daemon = Daemon([self.docs], settings, environ=_env(api, home), on_progress=self.ends)
        self.turns = 0
        self.count = 0
        self.samples: list[float] = []  # the second turns' save → request, warm-up included

    def _turn(self, doc: Path, prompt: str) -> float:
        """Save `prompt`; seconds until the API has its request. Waits for the turn's end."""
        seen = len(self.api.requests)
        text = doc.read_text(encoding="utf-8") + prompt + "\n"
        start = time.perf_counter()
        doc.write_text(text, encoding="utf-8")
        self.api.wait_for_requests(seen + 1, TIMEOUT)  # a condition wait: no polling delay
        took = time.perf_counter() - start
        self.turns += 1
        self.ends.wait_for(self.turns)
        wait_until(lambda: _idle(self.daemon, doc), TIMEOUT, 0.005, "the daemon to see the end")
        return took

    def second_turn(self) -> None:
        self.count += 1
        doc = self.docs.resolve() / f"doc-{self.count}.md"
        doc.write_text(DOC, encoding="utf-8")
        self._turn(doc, "first")
        self.samples.append(self._turn(doc, "second"))


def bench_warm(folder: Path, reps: int, check: bool) -> list[Row]:
    claude = find_claude()
    with FakeMessagesAPI(default=[{"type": "text", "text": "ok"}]) as api:
        warm = _Mode(folder / "warm", api, claude, warm=True)
        cold = _Mode(folder / "cold", api, claude, warm=False)
        with running(warm.daemon), running(cold.daemon):
            alternate([warm.second_turn, cold.second_turn], reps, warmup=1)
            memory = _rss(warm.daemon)
    warm_s, cold_s = warm.samples[1:], cold.samples[1:]  # without the warm-up
    if check:
        for mode in (warm, cold):
            if any(state != "done" for state in mode.ends.states):
                raise CheckFailed(f"warm: turns ended as {sorted(set(mode.ends.states))}")
    cli_warm = statistics.median(warm_s) - SETTLE_STEP
    cli_cold = statistics.median(cold_s) - SETTLE_STEP
    return [
        Row(
            "warm/2nd",
            "daemon, warm CLI: save → API request, 2nd turn",
            tuple(warm_s),
            baseline="cold/2nd",
            note=f"minus settle {cli_warm * 1000:.0f} ms; cold/warm {cli_cold / cli_warm:.1f}×",
        ),
        Row(
            "cold/2nd",
            "daemon, a CLI per turn: save → API request, 2nd turn",
            tuple(cold_s),
            note=f"minus settle {cli_cold * 1000:.0f} ms (settle_step {SETTLE_STEP * 1000:.0f} ms)",
        ),
        *memory,
    ]


def _rss_of(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) * 1024
    return 0.0


def _rss(daemon: Daemon) -> list[Row]:
    """Memory with the warm CLIs of the documents just measured (at most WARM_DOCS)."""
    if not sys.platform.startswith("linux") or daemon.pool is None:
        return []
    pids = daemon.pool.pids()
    clis = [_rss_of(pid) for pid in pids]
    own = _rss_of(os.getpid())
    each = sum(clis) / max(len(clis), 1)
    return [
        Row(
            f"rss/{len(pids)} warm",
            f"resident memory of {len(pids)} warm CLIs (all together)",
            (sum(clis),),
            unit="B",
            note=f"{each / 2**20:.0f} MiB each; daemon {own / 2**20:.0f} MiB",
        )
    ]


if __name__ == "__main__":  # a quick look without the whole runner
    with tempfile.TemporaryDirectory() as scratch:
        for row in bench_warm(Path(scratch), 3, True):
            print(row.name, [f"{v:.3f}" for v in row.values], row.note)
