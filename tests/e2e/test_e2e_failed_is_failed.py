"""Failed is failed, whichever agent: a request the API refused ends the turn failed (exit 2),
with a callout where the reply would be and the prompt kept pending — the real OpenCode on the
fake OpenAI API answering 400, under one-shot `agentdoc run`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document import parser as document
from agentdoc.records.status import read_status
from tests.support.agents import ONE_SHOT_TIMEOUT, fake_api_for, one_shot
from tests.support.processes import kill_all, processes_with_env, run_cli

pytestmark = pytest.mark.e2e


def test_opencode_answered_400_fails_the_turn_and_keeps_the_prompt(tmp_path: Path) -> None:
    # Not "prompt is too long": OpenCode takes that one as its cue to compact and try again.
    message = "messages.0.content: the model does not accept this request"
    with fake_api_for("opencode") as api:
        run = one_shot("opencode", tmp_path, api)
        api.add({"status": 400, "message": message})
        run.doc.write_text(run.doc.read_text() + "Say something.\n")
        try:
            done = run_cli(["run", str(run.doc)], run.env, timeout=ONE_SHOT_TIMEOUT)
        finally:
            kill_all(processes_with_env("HOME", str(run.agent_home)))

    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stdout + done.stderr
    text = run.doc.read_text()
    parsed = document.parse(text)
    # The prompt stays pending: the callout is marked unanswered, no new `## User` follows it.
    assert [t.role for t in parsed.turns] == ["user", "assistant"], text
    assert "Say something." in parsed.turns[0].content
    assert "agentdoc:unanswered" in text and "[!WARNING]" in text, text
    found = read_status(run.doc)
    assert found is not None and found.state == "error", found
