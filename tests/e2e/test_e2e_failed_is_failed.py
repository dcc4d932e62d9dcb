"""Failed is failed, whichever agent: a request the API refused ends the turn failed (exit 2 for
one-shot `agentdoc run`, status `error` under `agentdoc watch`), with a callout giving the API's
own message where the reply would be, and the prompt kept pending.

The real OpenCode, on the fake of each wire its providers speak (Anthropic Messages through
`@ai-sdk/anthropic`, OpenAI Responses through `@ai-sdk/openai`, Chat Completions through
`@ai-sdk/openai-compatible`), refused in the ways a person meets: a 400 on the first turn and on a
later turn of a warm session, a 429 retried until OpenCode gives up, and an error event in the
middle of a stream. A refused title request (a side request of OpenCode's own) is not a
failed turn. OpenCode 1.18 answers each of these `session/prompt` with a JSON-RPC error
(-32603, "Internal error: " and the API's message or, mid-stream, the error event's JSON).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeChatAPI, FakeMessagesAPI, FakeResponsesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry, parse_entry
from agentdoc.agents.fakeapi.wire import RecordedRequest
from agentdoc.document import parser as document
from agentdoc.records.status import read_status
from tests.support.agents import (
    AGENT_DOC,
    ONE_SHOT_TIMEOUT,
    OneShot,
    agent_config,
    fake_api_for,
    is_title_request,
    one_shot,
    opencode_env,
)
from tests.support.paths import REPO_ROOT
from tests.support.processes import (
    WatchProcess,
    base_env,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT = 60.0


def assert_failed_and_pending(doc: Path, prompt: str, message: str) -> None:
    """The turn for `prompt` failed: a callout with the API's `message`, the prompt pending."""
    text = doc.read_text()
    parsed = document.parse(text)
    assert parsed.pending_prompt() == prompt, text[-1500:]
    last = parsed.turns[-1]
    assert last.role == "assistant" and "agentdoc:unanswered" in last.content, text[-1500:]
    assert "[!WARNING]" in last.content and message in last.content, text[-1500:]
    found = read_status(doc)
    assert found is not None and found.state == "error", found
    assert found.error is not None and message in found.error, found


# -- one-shot, one provider each ---------------------------------------------------------------


def refused_run(run: OneShot, message: str) -> subprocess.CompletedProcess[str]:
    """`agentdoc run` of "Say something." that the API refuses with a 400 saying `message`."""
    run.api.add({"status": 400, "message": message})
    run.doc.write_text(run.doc.read_text() + "Say something.\n")
    try:
        return run_cli(["run", str(run.doc)], run.env, timeout=ONE_SHOT_TIMEOUT)
    finally:
        kill_all(processes_with_env("HOME", str(run.agent_home)))


def test_opencode_answered_400_fails_the_turn_and_keeps_the_prompt(tmp_path: Path) -> None:
    # Not "prompt is too long": OpenCode takes that one as its cue to compact and try again.
    message = "messages.0.content: the model does not accept this request"
    with fake_api_for("opencode") as api:
        run = one_shot("opencode", tmp_path, api)
        done = refused_run(run, message)

    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr
    text = run.doc.read_text()
    parsed = document.parse(text)
    # The prompt stays pending: the callout is marked unanswered, no new `## User` follows it.
    assert [t.role for t in parsed.turns] == ["user", "assistant"], text
    assert "Say something." in parsed.turns[0].content
    assert_failed_and_pending(run.doc, "Say something.", message)


# OpenCode's other providers, each on the fake of its wire (the vendor's own error JSON).
PROVIDERS: dict[str, tuple[str, type[FakeMessagesAPI]]] = {
    "openai-responses": ("@ai-sdk/openai", FakeResponsesAPI),
    "openai-chat": ("@ai-sdk/openai-compatible", FakeChatAPI),
}


def with_provider(env: dict[str, str], npm: str) -> dict[str, str]:
    """OpenCode's environment with its provider speaking through `npm` instead."""
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    config["provider"]["fake"]["npm"] = npm
    return env | {"OPENCODE_CONFIG_CONTENT": json.dumps(config)}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_opencode_on_openai_wires_fails_a_refused_turn(tmp_path: Path, provider: str) -> None:
    npm, fake = PROVIDERS[provider]
    message = "Invalid value for 'input': the model does not accept this request"
    with fake(side_calls=is_title_request) as api:
        run = one_shot("opencode", tmp_path, api)
        agent = with_provider(opencode_env(api, run.agent_home), npm)
        agent_config(tmp_path / "config.toml", "opencode", agent)
        done = refused_run(run, message)
        assert api.requests, "OpenCode never called the fake API"

    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr
    assert_failed_and_pending(run.doc, "Say something.", message)


# -- the daemon: one warm OpenCode, refused again and again ----------------------------------

TITLE_REFUSED = "the title model does not accept this request"


class TitleRefusingAPI(FakeMessagesAPI):
    """The Messages API refusing OpenCode's title request (a side call) with a 400."""

    def _side_answer(self, request: RecordedRequest) -> Any:
        if self.dialect.route(request) == "model":
            return parse_entry({"status": 400, "message": TITLE_REFUSED}).answer
        return super()._side_answer(request)


@dataclass
class Watched:
    api: FakeMessagesAPI
    doc: Path
    daemon: WatchProcess

    def ask(self, prompt: str, *entries: ScriptEntry) -> None:
        text = self.doc.read_text()
        assert text.endswith("## User\n\n"), text[-300:]
        self.save_and_wait_sent(text + prompt + "\n", *entries)

    def send_again(self, *entries: ScriptEntry) -> None:
        """Delete the failure callout, as the callout says: the pending prompt goes again."""
        text = self.doc.read_text()
        self.save_and_wait_sent(text[: text.rindex("## Assistant")], *entries)

    def save_and_wait_sent(self, text: str, *entries: ScriptEntry) -> None:
        self.api.clear()
        self.api.add(*entries)
        before = len(self.api.requests)
        self.doc.write_text(text)
        wait_for(lambda: len(self.api.requests) > before, "the prompt sent", TIMEOUT)

    def wait_ended(self, what: str, needle: str) -> None:
        try:
            wait_for(
                lambda: needle in self.doc.read_text() and state_of(self.doc) in ("idle", "error"),
                what=what,
                timeout=TIMEOUT,
            )
        except AssertionError:
            print(self.doc.read_text()[-2500:])
            print(self.daemon.log()[-4000:])
            raise


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Watched]:
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text(AGENT_DOC.format(name="opencode"))
    with TitleRefusingAPI(side_calls=is_title_request) as api:
        config = agent_config(tmp_path / "config.toml", "opencode", opencode_env(api, agent_home))
        env = base_env(home, AGENTDOC_CONFIG=str(config))
        env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(REPO_ROOT)
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            yield Watched(api, doc, daemon)
            daemon.send(signal.SIGTERM)
            daemon.wait(30)
        leftovers = processes_with_env("HOME", str(agent_home))
        kill_all(leftovers)
        assert not leftovers, f"OpenCode outlived the daemon: {leftovers}"


def test_a_warm_opencode_fails_every_refused_turn_and_recovers(watched: Watched) -> None:
    # The first turn: a 400 on the request that answers it.
    first = "messages.0.content: the first request is refused"
    watched.ask("Say something.", {"status": 400, "message": first, "times": "always"})
    watched.wait_ended("the first turn's failure", first)
    assert_failed_and_pending(watched.doc, "Say something.", first)

    # Sent again, it is answered: the title request OpenCode makes beside it is refused (a
    # side request of its own, not the turn's), and the reply is whole.
    watched.send_again([{"type": "text", "text": "Here is something."}])
    watched.wait_ended("the first reply", "Here is something.")
    assert state_of(watched.doc) == "idle"
    assert TITLE_REFUSED not in watched.doc.read_text()

    # A later turn of the warm session, refused in each way in turn; each send goes again.
    later = "messages.2.content: the later request is refused"
    watched.ask("And more?", {"status": 400, "message": later, "times": "always"})
    watched.wait_ended("the later turn's failure", later)
    assert_failed_and_pending(watched.doc, "And more?", later)

    # OpenCode tries a 429 again five times, then gives up (the fake says retry at once).
    watched.send_again({"status": 429, "retry_after": 0.05, "times": "always"})
    watched.wait_ended("the 429", "Rate limited")
    assert_failed_and_pending(watched.doc, "And more?", "Rate limited")

    # The vendor's error event in the middle of the stream, after the first words.
    broken = "messages.2.content: refused mid-stream"
    midway = {"mode": "sse_error", "after_deltas": 1, "error_type": "invalid_request_error"}
    watched.send_again(
        {
            "content": [{"type": "text", "text": "Partial words that never finish."}],
            "fail": midway | {"message": broken},
            "times": "always",
        }
    )
    watched.wait_ended("the mid-stream error", broken)
    found = read_status(watched.doc)
    assert found is not None and found.state == "error", found
    text = watched.doc.read_text()
    assert "[!WARNING]" in text and broken in text, text[-1500:]
    assert '{"type"' not in text, text[-1500:]  # the API's message, not its JSON

    # And the warm session still answers.
    if document.parse(text).pending_prompt() == "And more?":
        watched.send_again([{"type": "text", "text": "More, at last."}])
    else:
        watched.ask("Try once more.", [{"type": "text", "text": "More, at last."}])
    watched.wait_ended("the reply after the failures", "More, at last.")
    assert state_of(watched.doc) == "idle"
