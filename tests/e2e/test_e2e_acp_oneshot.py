"""ACP agents under one-shot `agentdoc run` (a new agent process per turn), as a person runs it:
the real agents on the project's offline fakes, `agentdoc run` as a process.

Gemini CLI continues its own session from one run to the next (its `session/load` used to erase
a session loaded in the minute it was created, so every turn started afresh). OpenCode retrying
a failed API request shows in the document while it waits (it tells no ACP client, only its
log). A reason given when denying a tool call reaches the model with the next run's prompt
(ACP's answer has no field for it; agentdoc keeps it with the document's state till then).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agentdoc.document import parser as document
from tests.support.agents import (
    ONE_SHOT_TIMEOUT,
    WRITE_TOOLS,
    fake_api_for,
    one_shot,
)
from tests.support.processes import (
    CLI,
    kill_all,
    processes_with_env,
    run_cli,
    state_of,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

TIMEOUT = ONE_SHOT_TIMEOUT


def test_gemini_continues_its_session_in_the_next_one_shot_run(tmp_path: Path) -> None:
    with fake_api_for("gemini") as api:
        run = one_shot("gemini", tmp_path, api)
        try:
            run.turn("Remember the word heliotrope.", "Noted: heliotrope.")
            first = run.session()
            reply = run.turn("Which word was it?", "It was heliotrope.")
        finally:
            kill_all(processes_with_env("HOME", str(run.agent_home)))
        assert "It was heliotrope." in reply
        assert "session loaded" in reply, reply  # not a new session sent the transcript
        assert run.session() == first
        # The second request carries the first exchange as the conversation's own turns: the
        # model's reply as a model turn, not pasted into the prompt.
        contents = api.requests[-1].body["contents"]
        said = [c for c in contents if c.get("role") == "model"]
        assert "Noted: heliotrope." in json.dumps(said), contents
        texts = api.user_texts(api.requests[-1])
        assert any(t.strip() == "Remember the word heliotrope." for t in texts), texts
        assert texts[-1].strip().endswith("Which word was it?")


def test_opencode_retrying_an_api_error_shows_in_the_document(tmp_path: Path) -> None:
    with fake_api_for("opencode") as api:
        run = one_shot("opencode", tmp_path, api)
        api.add({"status": 529, "times": 2}, [{"type": "text", "text": "Through at last."}])
        run.doc.write_text(run.doc.read_text() + "Say something.\n")
        seen: list[str] = []

        def retrying() -> bool:
            text = run.doc.read_text()
            seen.append(text)
            return "*API error (Overloaded): retrying (attempt 2)…*" in text

        with subprocess.Popen(
            [*CLI, "run", str(run.doc)],
            env=run.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as proc:
            try:
                wait_for(retrying, "the retry notice in the document", timeout=TIMEOUT)
                out, err = proc.communicate(timeout=TIMEOUT)
            finally:
                if proc.poll() is None:
                    proc.kill()
                kill_all(processes_with_env("HOME", str(run.agent_home)))
        assert proc.returncode == 0, out + err
        reply = document.parse(run.doc.read_text()).turns[-2].content
        assert "Through at last." in reply
        assert "retrying" not in reply  # the notice goes once the reply comes


def test_a_deny_reason_reaches_the_model_in_the_next_one_shot_run(tmp_path: Path) -> None:
    with fake_api_for("opencode") as api:
        run = one_shot("opencode", tmp_path, api)
        folder = run.doc.parent
        api.add([WRITE_TOOLS["opencode"](folder, "x.txt", "no")], [{"type": "text", "text": "Ok."}])
        run.doc.write_text(run.doc.read_text() + "Write x.txt.\n")
        with subprocess.Popen(
            [*CLI, "run", str(run.doc)], env=run.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as proc:
            try:
                wait_for(lambda: state_of(run.doc) == "waiting", "the approval", timeout=TIMEOUT)
                denied = run_cli(["deny", str(run.doc), "-m", "Not that file, please."], run.env)
                assert denied.returncode == 0, denied.stderr
                proc.communicate(timeout=TIMEOUT)
            finally:
                if proc.poll() is None:
                    proc.kill()
        assert not (folder / "x.txt").exists()
        kept = folder / ".agentdoc" / "chat.md.reasons.json"
        assert json.loads(kept.read_text()) == ["Not that file, please."]
        api.clear()
        try:
            reply = run.turn("Then what?", "Understood about the file.")
        finally:
            kill_all(processes_with_env("HOME", str(run.agent_home)))
        assert "Understood about the file." in reply
        sent = api.user_texts(api.requests[-1])[-1]
        assert sent.startswith("(What I said when answering your tool requests:\n")
        assert "- Not that file, please." in sent and sent.endswith("Then what?")
        assert not kept.exists()  # sent once
