"""The scripted fake ACP agent: its scripts (capabilities, chunks), the agent as a process or as a
configured `[agents.fake]`, and reading the events of a turn."""

from __future__ import annotations

import json
import stat
import sys
import time
from pathlib import Path
from typing import Any

from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.turn import AcpTurn
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.events import BlockDelta, Event, TurnEnd
from agentdoc.agents.base.process import END
from agentdoc.config import Settings
from tests.support.paths import FAKE_ACP_AGENT, TINY_ACP_AGENT


def doc_text(meta: str = "agent: fake", earlier: str = "") -> str:
    return f"---\nagentdoc: {{{meta}}}\n---\n\n# Chat\n\n{earlier}## User\n\nhello there\n"


def chunk(text: str, kind: str = "agent_message_chunk") -> dict[str, Any]:
    return {"update": {"sessionUpdate": kind, "content": {"type": "text", "text": text}}}


class FakeAgent:
    """The scripted agent as an `[agents.fake]` entry of the user's config."""

    def __init__(self, tmp_path: Path, script: dict[str, Any]) -> None:
        self.log = tmp_path / "acp-log.jsonl"
        self.script = tmp_path / "acp-script.json"
        self.script.write_text(json.dumps(script))
        self.command = [sys.executable, str(FAKE_ACP_AGENT), str(self.script), str(self.log)]

    def settings(self, **overrides: Any) -> Settings:
        base: dict[str, Any] = {
            "agents": {"fake": {"command": self.command}},
            "flush_interval": 0.05,
            "warm_sessions": 0,
        }
        return Settings.model_validate(base | overrides)

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        messages = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [m for m in messages if method is None or m.get("method") == method]

    def prompts(self) -> list[str]:
        return [
            block["text"]
            for m in self.received("session/prompt")
            for block in m["params"]["prompt"]
        ]

    def answers(self) -> list[dict[str, Any]]:
        return [m["result"] for m in self.received() if "result" in m and "outcome" in m["result"]]


def caps(**agent_capabilities: Any) -> dict[str, Any]:
    return {
        "result": {
            "protocolVersion": 1,
            "agentCapabilities": agent_capabilities,
            "agentInfo": {"name": "fake-acp", "version": "0.1"},
        }
    }


class Agent:
    """One fake agent process and the log of what it received."""

    def __init__(self, tmp_path: Path, script: dict[str, Any], **options: Any) -> None:
        self.log = tmp_path / "acp-log.jsonl"
        path = tmp_path / "script.json"
        path.write_text(json.dumps(script))
        argv = [sys.executable, str(FAKE_ACP_AGENT), str(path), str(self.log)]
        options.setdefault("handshake_timeout", 10.0)
        options.setdefault("clearance", Clearance.scratch(tmp_path))
        self.process = AcpProcess(argv, tmp_path, {"PATH": ""}, name="fake", **options)

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        messages = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [m for m in messages if method is None or m.get("method") == method]


def events_of(turn: AcpTurn, timeout: float = 10.0) -> list[Event]:
    """Every event of the turn, up to END."""
    found: list[Event] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = turn.next_event(0.1)
        if event is END:
            return found
        if event is not None:
            found.append(event)  # type: ignore[arg-type]
    raise AssertionError(f"the turn did not end; events so far: {found}")


def text_of(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, BlockDelta))


def end_of(events: list[Event]) -> TurnEnd:
    assert isinstance(events[-1], TurnEnd), events
    assert sum(isinstance(e, TurnEnd) for e in events) == 1
    return events[-1]


def next_of(turn: AcpTurn, kind: type[Any], timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = turn.next_event(0.1)
        if isinstance(event, kind):
            return event
        assert event is not END, f"the turn ended before a {kind.__name__}"
    raise AssertionError(f"no {kind.__name__}")


def tiny_agent(folder: Path, name: str, mode: str = "ok") -> Path:
    """An ACP agent program named `name` that answers `initialize` as `mode` says."""
    exe = folder / name
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{TINY_ACP_AGENT}" {mode}\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe
