"""The real Gemini CLI, codex-acp and OpenCode, over raw ACP, against the project's fake APIs.

These prove the fakes (and the offline set-up in tests/support/agents.py) with the real
binaries, independently of agentdoc's own ACP client: a turn streams message and thought
chunks, a write asks permission and runs only when allowed, usage is reported, a second prompt
in the same session carries the first, an HTTP error ends the prompt, and cancel ends it.
Each agent runs as one process per module, sharing its fake API and scratch home.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from tests.support.agents import (
    AGENTS,
    INITIALIZE,
    WRITE_TOOLS,
    AcpDriver,
    AcpError,
    PromptResult,
    agent_command,
    agent_env,
    fake_api_for,
    select,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

THINKING = {"type": "thinking", "thinking": "Weighing the question carefully."}


@dataclass
class Agent:
    name: str
    api: FakeMessagesAPI
    driver: AcpDriver
    cwd: Path
    session: str
    init: dict[str, Any]

    def prompt(self, text: str, **kwargs: Any) -> PromptResult:
        params = {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]}
        return self.driver.prompt_like("session/prompt", params, timeout=90, **kwargs)


@pytest.fixture(scope="module", params=AGENTS)
def agent(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Agent]:
    name = str(request.param)
    command = agent_command(name)
    home = tmp_path_factory.mktemp(f"{name}-home")
    cwd = home / "work"
    cwd.mkdir()
    with fake_api_for(name) as api:
        driver = AcpDriver(command, agent_env(name, api, home), cwd, home / "stderr.log")
        try:
            init = driver.call("initialize", INITIALIZE, timeout=60)
            session = driver.call("session/new", {"cwd": str(cwd), "mcpServers": []}, timeout=60)
            _ask_before_edits(driver, session)
            yield Agent(name, api, driver, cwd, session["sessionId"], init)
        finally:
            driver.close()


# The mode that asks before edits and commands, for the agents that do not start in one
# (codex-acp 2 starts in "agent", where its own reviewer decides; the Claude adapter in "auto",
# where its classifier does): what agentdoc sets under the default policy.
ASKING_MODES = ("default", "read-only")


def _ask_before_edits(driver: AcpDriver, session: dict[str, Any]) -> None:
    for option in session.get("configOptions") or ():
        values = [choice.get("value") for choice in option.get("options") or ()]
        asking = next((mode for mode in ASKING_MODES if mode in values), None)
        if option.get("category") == "mode" and asking and option.get("currentValue") != asking:
            params = {"sessionId": session["sessionId"], "configId": option["id"], "value": asking}
            driver.call("session/set_config_option", params)


def _usage(agent: Agent, result: PromptResult) -> dict[str, Any] | None:
    """Each agent reports usage its own way (README: the agents)."""
    found: dict[str, Any] | None
    if agent.name == "gemini":
        found = result.result.get("_meta", {}).get("quota", {}).get("token_count")
    elif agent.name == "codex":
        updates = result.updates
        found = next((u for u in updates if u.get("sessionUpdate") == "usage_update"), None)
    else:
        found = result.result.get("usage")
    return found


def test_handshake_names_the_agent_and_its_session_capabilities(agent: Agent) -> None:
    assert agent.init["protocolVersion"] == 1
    assert agent.init["agentCapabilities"]["loadSession"] is True
    assert agent.session


def test_a_turn_streams_thought_and_message_chunks_and_reports_usage(agent: Agent) -> None:
    agent.api.add({"content": [THINKING, {"type": "text", "text": "Four, as ever."}]})
    result = agent.prompt("What is two plus two?")
    assert result.result["stopReason"] == "end_turn"
    assert result.text() == "Four, as ever."
    assert len(result.chunks("agent_message_chunk")) > 1  # deltas, not one snapshot
    assert "Weighing the question carefully." in result.thought()
    assert "Weighing" not in result.text()
    assert _usage(agent, result), f"no usage in {result.result} / {result.updates}"


def test_a_second_prompt_in_the_session_carries_the_first(agent: Agent) -> None:
    agent.api.add([{"type": "text", "text": "Noted: the word is heliotrope."}])
    agent.prompt("Remember the word heliotrope.")
    agent.api.add([{"type": "text", "text": "It was heliotrope."}])
    result = agent.prompt("Which word did I ask you to remember?")
    assert result.text() == "It was heliotrope."
    last = agent.api.requests[-1]
    texts = agent.api.user_texts(last)
    assert texts[-1].endswith("Which word did I ask you to remember?")
    assert any("Remember the word heliotrope." in t for t in texts)
    assert "Noted: the word is heliotrope." in json.dumps(last.body)  # the model's own reply


def test_text_streams_before_the_reply_ends(agent: Agent) -> None:
    agent.api.add({"content": [{"type": "text", "text": "one two three four five"}],
                   "pause_after_deltas": 2})  # fmt: skip
    seen: list[dict[str, Any]] = []
    done = threading.Event()
    outcome: list[PromptResult] = []

    def run() -> None:
        outcome.append(agent.prompt("Count to five.", on_update=seen.append))
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    agent.api.wait_paused(timeout=60)
    wait_for(
        lambda: any(u.get("sessionUpdate") == "agent_message_chunk" for u in seen),
        "a message chunk while the stream is held",
    )
    assert not done.is_set()
    agent.api.release()
    thread.join(timeout=60)
    assert outcome and outcome[0].text() == "one two three four five"


def test_a_write_asks_permission_and_runs_when_allowed(agent: Agent) -> None:
    write = WRITE_TOOLS[agent.name](agent.cwd, "allowed.txt", "written by the agent")
    agent.api.add([write], [{"type": "text", "text": "The file is written."}])
    before = len(agent.api.requests)
    result = agent.prompt("Write allowed.txt.", answer=select("allow_once"))
    assert result.permissions, "the write tool did not ask"
    kinds = {option["kind"] for option in result.permissions[0]["options"]}
    assert {"allow_once", "reject_once"} <= kinds
    assert (agent.cwd / "allowed.txt").read_text() == "written by the agent"
    assert result.text().endswith("The file is written.")
    assert len(agent.api.requests) == before + 2  # the tool's result went back to the model


def test_a_rejected_write_does_not_run(agent: Agent) -> None:
    write = WRITE_TOOLS[agent.name](agent.cwd, "denied.txt", "must not appear")
    agent.api.add([write], [{"type": "text", "text": "Understood, I left it."}])
    result = agent.prompt("Write denied.txt.", answer=select("reject_once"))
    assert result.permissions
    assert not (agent.cwd / "denied.txt").exists()


def test_an_http_error_ends_the_prompt_with_its_message(agent: Agent) -> None:
    # Gemini and OpenCode answer the prompt with a JSON-RPC error that carries the API's
    # message; codex-acp 2 ends it `end_turn`, after a `systemError` thread status and the
    # API's error body as message text (agentdoc's quirks row makes that a failed turn).
    agent.api.clear()
    agent.api.add({"status": 400, "message": "fake refusal of this request", "times": "always"})
    try:
        if agent.name == "codex":
            result = agent.prompt("This one fails.")
            statuses = [
                u.get("_meta", {}).get("codex", {}).get("threadStatus", {}).get("type")
                for u in result.updates
                if u.get("sessionUpdate") == "session_info_update"
            ]
            assert "systemError" in statuses
            said = result.text()
        else:
            with pytest.raises(AcpError) as caught:
                agent.prompt("This one fails.")
            said = json.dumps(caught.value.error)
    finally:
        agent.api.clear()
    assert "fake refusal of this request" in said


def test_cancel_ends_the_prompt_as_cancelled(agent: Agent) -> None:
    agent.api.add({"content": [{"type": "text", "text": "a reply that never ends"}],
                   "pause_after_deltas": 1})  # fmt: skip
    outcome: list[PromptResult] = []
    thread = threading.Thread(target=lambda: outcome.append(agent.prompt("Go on.")), daemon=True)
    thread.start()
    agent.api.wait_paused(timeout=60)
    agent.driver.send({"method": "session/cancel", "params": {"sessionId": agent.session}})
    thread.join(timeout=60)
    agent.api.release()
    assert outcome and outcome[0].result["stopReason"] == "cancelled"
