"""Warm sessions against cold turns, with the real Claude Code CLI and the offline API.

The one benchmark that needs the real CLI (`node_modules/.bin/claude` after `make install`, or
`$AGENTDOC_CLAUDE`); without it, it reports that it could not run. Both modes run the same
daemon (default settle settings) on the same offline Messages API in one run, alternating:
each repetition is a fresh document whose first turn starts its CLI, and the measured figure is
its **second** turn, from the save to the moment the API receives that turn's request.

`warm/cli` is the floor of a warm turn: the same warm CLI driven directly (no daemon, no
document), from handing it the prompt to the API's request.

`opened/1st` is the first turn of a document that has a session but no CLI running (as after a
restart, or an idle close): an editor opens it, the person types for TYPING seconds (modelled,
untimed), then saves the prompt; timed from the save. The open is what lets the CLI start early.

RSS: the resident memory of the warm CLIs (and the daemon's own) with N documents warm.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from live import DOC, TIMEOUT, _Ends, _idle, running
from measure import CheckFailed, Row, alternate, installed, wait_until

from agentdoc.agents import END, AgentRequest, AgentTurn
from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.daemon import own_command
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.service import Daemon
from agentdoc.document import parse

REPO = Path(__file__).resolve().parent.parent
WARM_DOCS = 4  # documents kept warm for the memory figure (the default `warm_sessions`)
TYPING = 2.0  # seconds between opening a document and saving a prompt into it (modelled)


def find_claude() -> str:
    return installed(
        "AGENTDOC_CLAUDE",
        REPO / "node_modules" / ".bin" / "claude",
        "the real Claude CLI is not installed (`make install`, or AGENTDOC_CLAUDE)",
    )


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
        settings = Settings(claude=claude, warm_sessions=WARM_DOCS if warm else 0)
        self.pause = settings.settle_step
        self.ends = _Ends()
        self.daemon = Daemon([self.docs], settings, environ=_env(api, home), on_progress=self.ends)
        self.turns = 0
        self.count = 0
        self.samples: list[float] = []  # the second turns' save → request, warm-up included
        self.opened: list[float] = []  # first turns of documents opened since start-up

    def _turn(self, doc: Path, prompt: str) -> float:
        """Save `prompt`; seconds until the API has its request. Waits for the turn's end."""
        # A person reads the reply before saving the next prompt: untimed, and it keeps the
        # save from looking like a burst following the daemon's own last write.
        time.sleep(self.pause)
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

    def opened_first(self) -> None:
        pool = self.daemon.pool
        assert pool is not None
        self.count += 1
        doc = self.docs.resolve() / f"doc-{self.count}.md"
        doc.write_text(DOC, encoding="utf-8")
        self._turn(doc, "first")  # the document now has a session
        # And no CLI, as after a restart. The turn's end is a hint, and so is the daemon's
        # look at its own last write once that settles (a quiet step after it): each starts a
        # CLI again, so it is forgotten until a quiet while (untimed: the person reads the
        # reply) starts none.
        for _ in range(10):
            self.daemon.hints.drain()
            pool.forget(doc)
            time.sleep(2 * self.pause)
            self.daemon.hints.drain()
            if not pool.holds(doc):
                break
        else:
            raise CheckFailed("opened/1st: the daemon kept starting a CLI for the document")
        doc.read_bytes()  # an editor opens it
        wait_until(lambda: pool.holds(doc), TIMEOUT, 0.005, "a CLI started on the open")
        time.sleep(TYPING)
        self.opened.append(self._turn(doc, "second"))


def _drain(turn: AgentTurn) -> None:
    while turn.next_event(TIMEOUT) not in (END, None):
        pass
    turn.close(TIMEOUT)


class _Alone:
    """The CLI driven through a pool of its own for one document, no daemon."""

    def __init__(self, pool: WarmPool, doc: Path, settings: Settings, env: dict[str, str]) -> None:
        self.pool, self.doc, self.settings, self.env = pool, doc, settings, env


def _timed_turn(alone: _Alone, request: AgentRequest, api: FakeMessagesAPI) -> float:
    seen = len(api.requests)
    start = time.perf_counter()
    process = alone.pool.begin(alone.doc, request, alone.settings, alone.env)
    api.wait_for_requests(seen + 1, TIMEOUT)
    took = time.perf_counter() - start
    _drain(process)
    return took


def _cli_alone(
    folder: Path, api: FakeMessagesAPI, claude: str, reps: int
) -> tuple[list[float], list[float]]:
    """The CLI driven through the pool, no daemon, no document: prompt on stdin → request.
    For a process that ran a turn before (a warm turn's floor), and for one started TYPING
    seconds ahead of its first prompt (the floor of a document opened and then used)."""
    cwd = folder / "cli"
    (cwd / "home").mkdir(parents=True)
    doc, session = cwd / "doc.md", str(uuid.uuid4())
    settings, env = Settings(claude=claude), _env(api, cwd / "home")
    # The CLI in a folder only this machine writes: the leave `agentdoc run` gets there.
    leave = own_command(doc, settings)(cwd, parse(DOC))
    pool = WarmPool(capacity=1)
    warm: list[float] = []
    ahead: list[float] = []
    try:
        _drain(
            pool.begin(
                doc,
                AgentRequest("first", cwd, session_id=session, turn=1, clearance=leave),
                settings,
                env,
            )
        )
        for turn in range(2, 2 * reps + 4, 2):
            pool.forget(doc)
            pool.prewarm(
                doc,
                AgentRequest("", cwd, resume=session, turn=turn, clearance=leave),
                settings,
                env,
            )
            time.sleep(TYPING)
            request = AgentRequest(
                f"prompt {turn}", cwd, resume=session, turn=turn, clearance=leave
            )
            ahead.append(_timed_turn(_Alone(pool, doc, settings, env), request, api))
            request = AgentRequest(
                f"prompt {turn + 1}", cwd, resume=session, turn=turn + 1, clearance=leave
            )
            warm.append(_timed_turn(_Alone(pool, doc, settings, env), request, api))
    finally:
        pool.close_all()
    return warm[1:], ahead[1:]  # without the warm-up


def bench_warm(folder: Path, reps: int, check: bool) -> list[Row]:
    claude = find_claude()
    with FakeMessagesAPI(default=[{"type": "text", "text": "ok"}]) as api:
        warm = _Mode(folder / "warm", api, claude, warm=True)
        cold = _Mode(folder / "cold", api, claude, warm=False)
        with running(warm.daemon), running(cold.daemon):
            alternate([warm.second_turn, cold.second_turn, warm.opened_first], reps, warmup=1)
            memory = _rss(warm.daemon)
        alone, ahead = _cli_alone(folder, api, claude, reps)
    warm_s, cold_s = warm.samples[1:], cold.samples[1:]  # without the warm-up
    opened = warm.opened[1:]
    if check:
        for mode in (warm, cold):
            if any(state != "done" for state in mode.ends.states):
                raise CheckFailed(f"warm: turns ended as {sorted(set(mode.ends.states))}")
    warm_m, cold_m = statistics.median(warm_s), statistics.median(cold_s)
    return [
        Row(
            "warm/2nd",
            "daemon, warm CLI: save → API request, 2nd turn",
            tuple(warm_s),
            baseline="warm/cli",
            note=f"agentdoc's part {(warm_m - statistics.median(alone)) * 1000:.0f} ms; "
            f"cold/warm {cold_m / warm_m:.1f}×",
        ),
        Row(
            "warm/cli",
            "the warm CLI alone: prompt on stdin → API request",
            tuple(alone),
            note="the floor of a warm turn",
        ),
        Row(
            "opened/1st",
            "warm pool: editor opens, types, saves → API request",
            tuple(opened),
            baseline="ahead/cli",
            note=f"{(statistics.median(opened) - warm_m) * 1000:+.0f} ms over a warm turn",
        ),
        Row(
            "ahead/cli",
            "the CLI alone, started 2 s ahead: 1st prompt → API request",
            tuple(ahead),
            baseline="warm/cli",
            note="the CLI's own first-turn cost",
        ),
        Row(
            "cold/2nd",
            "daemon, a CLI per turn: save → API request, 2nd turn",
            tuple(cold_s),
            baseline="warm/cli",
            note="the cold CLI floor, plus agentdoc's part",
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
