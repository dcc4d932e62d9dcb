"""An agent left running by a SIGKILLed daemon is stopped by the next one, whatever the agent.

Recovery knows an agent agentdoc started by the marker in its environment, not by one agent's
command-line flags: here an ACP agent (the scripted stand-in), which carries no Claude flag.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentdoc.records import recovery
from tests.support.paths import FAKE_ACP_AGENT
from tests.support.processes import (
    alive,
    base_env,
    kill_all,
    processes_with_env,
    roles,
    watching,
)
from tests.support.waiting import wait_for

DOC = "---\nagentdoc: {agent: fake}\n---\n\n## User\n\n"


def _environ_of(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


@pytest.mark.slow
def test_an_acp_agent_orphaned_by_a_killed_daemon_is_stopped_at_the_next_start(
    tmp_path: Path,
) -> None:
    script, log = tmp_path / "script.json", tmp_path / "agent-log.jsonl"
    # It streams a little, then works on without reading its input (so the end of that input,
    # when the daemon dies, does not stop it): as an agent busy with a long tool call would.
    text = {"type": "text", "text": "Partial answer."}
    chunk = {"update": {"sessionUpdate": "agent_message_chunk", "content": text}}
    steps = [chunk, {"delay": 120}]
    script.write_text(json.dumps({"session/prompt": {"steps": steps}}))
    config = tmp_path / "config.toml"
    command = json.dumps([sys.executable, str(FAKE_ACP_AGENT), str(script), str(log)])
    config.write_text(f"settle_step = 0.1\nwarm_sessions = 0\n[agents.fake]\ncommand = {command}\n")
    tag = str(tmp_path)  # finds this test's agents, whoever their parent is now
    env = base_env(tmp_path / "home", AGENTDOC_CONFIG=str(config), ORPHAN_TEST=tag)
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = folder / "chat.md"
    doc.write_text(DOC)
    agents: list[int] = []
    try:
        with watching(folder, env, tmp_path / "first.log") as daemon:
            doc.write_text(DOC + "a question\n")
            wait_for(lambda: "Partial answer." in doc.read_text(), "the reply to stream")
            agents = [p for p in processes_with_env("ORPHAN_TEST", tag) if p != daemon.pid]
            assert agents, "the agent should run"
            marker = f"{recovery.MARKER}={daemon.pid}:".encode()
            assert all(any(e.startswith(marker) for e in _environ_of(p)) for p in agents)
            daemon.kill()  # SIGKILL: nothing of the daemon runs to stop its agent
        assert any(alive(p) for p in agents), "the agent outlived its daemon"

        with watching(folder, env, tmp_path / "second.log") as second:
            wait_for(lambda: not any(alive(p) for p in agents), "the orphan to be stopped")
            assert "left running by an interrupted turn" in second.log()
        assert roles(doc) == ["user", "assistant", "user"]
        assert "Partial answer." in doc.read_text() and "interrupted" in doc.read_text()
    finally:
        kill_all(processes_with_env("ORPHAN_TEST", tag))
