"""Each agent's warm second turn against Claude's, with the real agents on the offline fakes.

One daemon serves a document per agent and repetition, with warm processes (the default): the
first turn starts the agent, the measured figure is the **second** turn, from the save to the
moment the agent's fake API receives that turn's request. Claude (its own fake Messages API)
is the baseline; Gemini CLI, Codex (codex-acp) and OpenCode speak ACP to agentdoc and call
their vendors' fakes. An agent whose program is not installed (`make install`) is left out
with a note rather than failing the run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from live import DOC, SETTLE_MAX, SETTLE_STEP, _Ends, _idle, running
from measure import CheckFailed, Row, alternate, wait_until
from warm import _env, find_claude

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import AgentConfig, Settings
from agentdoc.daemon.service import Daemon

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # the tests' offline set-up of each agent
from tests.support.agents import (  # noqa: E402
    AGENTS,
    agent_env,
    fake_api_for,
    find_agent,
    launch_args,
)

# An ACP agent's first turn starts it: Gemini CLI and OpenCode take several seconds.
TIMEOUT = 90.0
REPLY = [{"type": "text", "text": "ok"}]


class _Bench:
    """One daemon, one fake API per agent; `second_turn(name)` measures one new document."""

    def __init__(self, folder: Path, names: list[str]) -> None:
        self.docs = folder / "docs"
        self.docs.mkdir(parents=True)
        self.apis = {name: fake_api_for(name, default=REPLY).start() for name in names}
        self.claude_api = FakeMessagesAPI(default=REPLY).start()
        home = folder / "home"
        home.mkdir()
        agents = {
            name: AgentConfig(
                command=(str(find_agent(name)), *launch_args(name)),
                env=agent_env(name, api, folder / f"{name}-home"),
            )
            for name, api in self.apis.items()
        }
        settings = Settings(
            claude=find_claude(), settle_step=SETTLE_STEP, settle_max=SETTLE_MAX, agents=agents
        )
        self.ends = _Ends()
        environ = _env(self.claude_api, home)
        self.daemon = Daemon([self.docs], settings, environ=environ, on_progress=self.ends)
        self.turns = 0
        self.samples: dict[str, list[float]] = {name: [] for name in ["claude", *names]}

    def close(self) -> None:
        for api in [self.claude_api, *self.apis.values()]:
            api.stop()

    def _api(self, name: str) -> FakeMessagesAPI:
        return self.claude_api if name == "claude" else self.apis[name]

    def _turn(self, name: str, doc: Path, prompt: str) -> float:
        api = self._api(name)
        seen = len(api.requests)
        text = doc.read_text(encoding="utf-8") + prompt + "\n"
        start = time.perf_counter()
        doc.write_text(text, encoding="utf-8")
        api.wait_for_requests(seen + 1, TIMEOUT)
        took = time.perf_counter() - start
        self.turns += 1
        self.ends.wait_for(self.turns)
        wait_until(lambda: _idle(self.daemon, doc), TIMEOUT, 0.005, "the daemon to see the end")
        return took

    def second_turn(self, name: str) -> None:
        doc = self.docs.resolve() / f"{name}-{len(self.samples[name])}.md"
        doc.write_text(DOC.replace("agentdoc: {}", f"agentdoc: {{agent: {name}}}"), "utf-8")
        self._turn(name, doc, "first")
        self.samples[name].append(self._turn(name, doc, "second"))


def _available() -> tuple[list[str], str]:
    names = [name for name in AGENTS if find_agent(name) is not None]
    missing = [name for name in AGENTS if name not in names]
    return names, f"not installed: {', '.join(missing)}" if missing else ""


def bench_agents(folder: Path, reps: int, check: bool) -> list[Row]:
    names, note = _available()
    bench = _Bench(folder, names)
    try:
        with running(bench.daemon):
            actions = [lambda n=name: bench.second_turn(n) for name in ["claude", *names]]
            alternate(actions, reps, warmup=1)
    finally:
        bench.close()
    if check and any(state != "done" for state in bench.ends.states):
        raise CheckFailed(f"agents: turns ended as {sorted(set(bench.ends.states))}")
    return [_row(name, bench.samples[name][1:], note) for name in ["claude", *names]]


def _row(name: str, samples: list[float], note: str) -> Row:
    excess = statistics.median(samples) - SETTLE_STEP
    shown = f"minus settle {excess * 1000:.0f} ms"
    if name == "claude":
        return Row(
            "agent/claude",
            "warm Claude CLI (stream-json): save → API request, 2nd turn",
            tuple(samples),
            note=f"{shown}; {note}" if note else shown,
        )
    return Row(
        f"agent/{name}",
        f"warm {name} over ACP: save → API request, 2nd turn",
        tuple(samples),
        baseline="agent/claude",
        note=shown,
    )


if __name__ == "__main__":  # a quick look without the whole runner
    with tempfile.TemporaryDirectory() as scratch:
        for row in bench_agents(Path(scratch), 3, True):
            print(row.name, [f"{v:.3f}" for v in row.values], row.note)
