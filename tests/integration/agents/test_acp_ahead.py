"""An ACP agent started ahead of its document's prompt, against the scripted fake agent: the
handshake and the session the next turn asks for happen before it, and that turn uses them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.acp.launch import AheadProcess, WarmAcp, warm
from agentdoc.agents.base.request import AgentRequest
from tests.support.acp import caps, chunk, end_of, events_of, text_of
from tests.support.clearance import leave_for
from tests.support.paths import FAKE_ACP_AGENT
from tests.support.waiting import wait_for

Started = tuple[WarmAcp, Callable[[str], list[dict[str, Any]]]]


@pytest.fixture
def ahead(tmp_path: Path) -> Iterator[Callable[..., Started]]:
    made: list[WarmAcp] = []

    def start(script: dict[str, Any], policy: str | None = None, **request: Any) -> Started:
        log = tmp_path / "acp-log.jsonl"
        (tmp_path / "script.json").write_text(json.dumps(script))
        argv = [sys.executable, str(FAKE_ACP_AGENT), str(tmp_path / "script.json"), str(log)]
        plan = AgentRequest(
            prompt="", cwd=tmp_path, agent="fake", **request, clearance=leave_for(tmp_path)
        )
        handle = warm(plan, argv, {"PATH": ""}, environ={}, policy=policy).start_ahead()
        assert handle is not None
        made.append(handle)

        def received(method: str) -> list[dict[str, Any]]:
            lines = log.read_text().splitlines() if log.exists() else []
            return [m for m in map(json.loads, lines) if m.get("method") == method]

        return handle, received

    yield start
    for handle in made:
        handle.close(1.0)


def opened_ahead(handle: WarmAcp) -> None:
    process = handle.process
    assert isinstance(process, AheadProcess)
    wait_for(lambda: process.ahead is not None, what="the session opened ahead")


def test_a_new_document_has_its_session_before_the_prompt(
    ahead: Callable[..., Started],
) -> None:
    handle, received = ahead({"session/prompt": {"steps": [chunk("Hi.")]}}, turn=1)
    opened_ahead(handle)
    assert len(received("session/new")) == 1 and not received("session/prompt")
    first = AgentRequest(
        prompt="hello",
        cwd=handle.process.cwd,
        turn=1,
        session_id="drawn",
        clearance=leave_for(handle.process.cwd),
    )
    assert handle.reusable_for(first)
    events = events_of(handle.begin(first))
    assert text_of(events) == "Hi." and end_of(events).session_id == "sess-1"
    assert len(received("session/new")) == 1  # the turn took the session opened ahead
    assert handle.process.opened is not None and handle.process.opened.how == "new"


def test_an_imported_document_sends_its_transcript_in_the_session_opened_ahead(
    ahead: Callable[..., Started],
) -> None:
    handle, received = ahead({}, turn=2)
    opened_ahead(handle)
    seeded = "User: earlier\n\nnext"
    first = AgentRequest(
        prompt="next",
        cwd=handle.process.cwd,
        turn=2,
        resume="gone",
        seeded_prompt=seeded,
        clearance=leave_for(handle.process.cwd),
    )
    assert not handle.reusable_for(first)  # a stored session it was not started for
    request = AgentRequest(
        prompt=seeded, cwd=handle.process.cwd, turn=2, clearance=leave_for(handle.process.cwd)
    )
    events_of(handle.begin(request))
    (prompt,) = received("session/prompt")
    assert prompt["params"]["prompt"][0]["text"] == seeded


def test_a_stored_session_is_resumed_ahead_and_the_turn_says_so(
    ahead: Callable[..., Started],
) -> None:
    script = {"initialize": caps(sessionCapabilities={"resume": {}})}
    handle, received = ahead(script, resume="old", turn=3)
    opened_ahead(handle)
    assert len(received("session/resume")) == 1 and not received("session/new")
    next_turn = AgentRequest(
        prompt="more",
        cwd=handle.process.cwd,
        resume="old",
        turn=3,
        clearance=leave_for(handle.process.cwd),
    )
    assert handle.reusable_for(next_turn)
    assert not handle.reusable_for(
        AgentRequest(
            prompt="x", cwd=handle.process.cwd, turn=3, clearance=leave_for(handle.process.cwd)
        )
    )
    events = events_of(handle.begin(next_turn))
    assert end_of(events).session_id == "old"
    assert len(received("session/resume")) == 1
    opened = handle.process.opened
    assert opened is not None and opened.footer() == "session resumed"


def test_an_agent_that_fails_ahead_lets_its_turn_say_why(ahead: Callable[..., Started]) -> None:
    handle, _received = ahead({"initialize": {"result": {"protocolVersion": 7}}}, turn=1)
    process = handle.process
    assert isinstance(process, AheadProcess)
    wait_for(process.prepared.is_set, what="the start ahead to give up")
    assert not handle.alive()  # the pool starts another for the turn


# A session whose agent starts it in a mode that would not ask before writing.
LAX = {
    "result": {
        "sessionId": "s-1",
        "configOptions": [
            {"id": "mode", "category": "mode", "currentValue": "bypassPermissions",
             "options": [{"value": "default"}, {"value": "plan"}, {"value": "bypassPermissions"}]},
        ],
    }
}  # fmt: skip


@pytest.mark.parametrize(("policy", "mode"), [(None, "default"), ("plan", "plan")])
def test_a_session_opened_ahead_is_put_in_the_users_policy_before_the_prompt(
    ahead: Callable[..., Started], policy: str | None, mode: str
) -> None:
    """Opened before anyone asked, the session still gets the config's permission_mode (the
    agent's own default asks nothing here) before the first prompt goes out."""
    handle, received = ahead({"session/new": LAX}, policy=policy, turn=1)
    opened_ahead(handle)
    assert not received("session/set_config_option")  # not yet: set when the turn takes it
    events_of(
        handle.begin(
            AgentRequest(
                prompt="hi", cwd=handle.process.cwd, turn=1, clearance=leave_for(handle.process.cwd)
            )
        )
    )
    (setting,) = received("session/set_config_option")
    assert setting["params"] == {"sessionId": "s-1", "configId": "mode", "value": mode}
    log = (handle.process.cwd / "acp-log.jsonl").read_text().splitlines()
    methods = [m.get("method") for m in map(json.loads, log)]
    assert methods.index("session/set_config_option") < methods.index("session/prompt")
