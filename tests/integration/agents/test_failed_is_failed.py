"""Failed is failed, whichever agent: pi (through pi-acp 0.0.34) sends its retry notices as reply
text and ends a request that failed every retry, or failed outright, as a normal `end_turn`. The
notices show as retry notices, not reply; such a turn fails (exit 2, a callout, the prompt kept).

The scripted ACP agent names itself `pi-acp` (its `agentInfo.name`) and sends what pi-acp sends,
through `agentdoc run` as a process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentdoc.document import parser as document
from tests.support.acp import FakeAgent, chunk, doc_text
from tests.support.processes import base_env, run_cli

RETRIES = [
    chunk("Retrying (attempt 1/3, waiting 2s)..."),
    chunk("Retrying (attempt 2/3, waiting 4s)..."),
    chunk("Retry finished, resuming."),
]


def run_pi(tmp_path: Path, steps: list[dict[str, Any]]) -> tuple[int, str, str]:
    info = {"name": "pi-acp", "version": "0.0.34"}
    initialize = {"result": {"protocolVersion": 1, "agentCapabilities": {}, "agentInfo": info}}
    agent = FakeAgent(tmp_path, {"initialize": initialize, "session/prompt": {"steps": steps}})
    config = tmp_path / "config.toml"
    command = ", ".join(f'"{part}"' for part in agent.command)
    config.write_text(f"warm_sessions = 0\n[agents.fake]\ncommand = [{command}]\n")
    (tmp_path / "home").mkdir()
    env = base_env(tmp_path / "home", AGENTDOC_CONFIG=str(config))
    doc = tmp_path / "chat.md"
    doc.write_text(doc_text())
    done = run_cli(["run", str(doc)], env)
    return done.returncode, done.stdout + done.stderr, doc.read_text()


@pytest.mark.parametrize("steps", [RETRIES, []], ids=["every retry failed", "failed outright"])
def test_a_request_pi_could_not_make_fails_the_turn(
    tmp_path: Path, steps: list[dict[str, Any]]
) -> None:
    code, output, text = run_pi(tmp_path, steps)
    assert code == 2, output
    assert "Retry" not in text, text
    assert "agentdoc:unanswered" in text and "[!WARNING]" in text, text
    turns = document.parse(text).turns
    assert [t.role for t in turns] == ["user", "assistant"], text  # the prompt is kept


def test_a_reply_after_pis_retries_is_the_reply_alone(tmp_path: Path) -> None:
    code, output, text = run_pi(tmp_path, [*RETRIES, chunk("Here it is.")])
    assert code == 0, output
    reply = document.parse(text).turns[1].content
    assert "Here it is." in reply and "Retry" not in reply, reply
