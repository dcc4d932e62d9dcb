"""The contract every agent passes: one set of behaviour tests, run against each row of
`tests/support/contract.py` (Claude Code natively, and every ACP agent), each the real program on
its offline fake vendor API under `agentdoc watch`, as a person uses them.

A reply streams into the document and thinking goes to the sidecar only; the next turn continues
the session; a write is asked in the document and runs once allowed; a deny's reason reaches the
agent; cancel stops the reply and the prompt queued below it is sent; a fork and an undo keep what
the agent remembers true; an API error ends the turn failed with the prompt kept. Where an agent
cannot do something, the test asserts what agentdoc says instead, or the row says why.

One daemon, one fake API and one document per agent carry the conversation turn by turn (the
agents take seconds to start), so the tests of a row run in this order. Under `-n` a worker may
start a row halfway, with a daemon and a document of its own: each test first brings that
document to where the tests before it leave it (`_story`), so any one test also runs alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agentdoc.document import parser as document
from agentdoc.records.status import read_status
from tests.support.contract import (
    DOC,
    ENDED,
    ROWS,
    AgentRow,
    Served,
    asked,
    serve,
    without_own_permission,
)
from tests.support.processes import held_reason, roles, run_cli, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

WORDS = " ".join(f"word{i}" for i in range(40))


@pytest.fixture(scope="module", params=ROWS, ids=str)
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    row: AgentRow = request.param
    root = tmp_path_factory.mktemp(f"{row.name}-contract")
    # OpenCode's asking comes from agentdoc's default policy here, not from its own config.
    with serve(root, row, doc=DOC.format(name=row.name), agent=without_own_permission) as it:
        yield it


def test_a_reply_streams_into_the_document_and_thinking_only_into_the_sidecar(
    served: Served,
) -> None:
    thought = "Considering the sky's colour."
    served.script(
        {
            "content": [
                {"type": "thinking", "thinking": thought},
                {"type": "text", "text": "The sky is blue because of Rayleigh scattering."},
            ],
            # Thinking and text deltas both count: Gemini sends the thought whole, the others
            # word by word (4); either way the first words of the text are out, "Rayleigh" not.
            "pause_after_deltas": 7,
        }
    )
    served.ask("Why is the sky blue?")
    served.api.wait_paused(timeout=served.timeout)
    wait_for(
        lambda: "The sky is" in served.doc.read_text(), "partial text", timeout=served.timeout
    )  # visible while the model is still held mid-reply
    assert "Rayleigh" not in served.doc.read_text()
    served.api.release()
    served.idle_with("because of Rayleigh scattering.")
    text = served.doc.read_text()
    assert thought not in text and "****" not in text
    sidecar = served.doc.with_name("chat.thinking.md")
    if served.row.thinking is None:
        assert thought in sidecar.read_text()
        assert "****" not in sidecar.read_text()  # Gemini's empty title stays out
    else:  # the row says why the agent passes no thinking on; none leaks into the reply
        assert not sidecar.exists() or thought not in sidecar.read_text()


# The turns the rest of a row builds on: the first test's question, and the second test's.
STORY = (
    ("Why is the sky blue?", "The sky is blue because of Rayleigh scattering."),
    ("What did I ask before?", "You asked about the sky."),
)


def _story(served: Served, turns: int = len(STORY)) -> None:
    """The first `turns` of the story, each told unless the document has it already."""
    for prompt, reply in STORY[:turns]:
        if prompt not in served.doc.read_text():
            served.turn(prompt, reply)


def test_the_next_turn_continues_the_session_in_the_same_process(served: Served) -> None:
    _story(served, 1)
    before = served.agent_processes()
    assert before, "no warm agent process after the first turn"
    served.turn("What did I ask before?", "You asked about the sky.")
    # The agent's first process still serves it (codex-acp's app-server and the Claude
    # adapter's Claude Code start and end helpers of their own meanwhile).
    assert before[0] in served.agent_processes()
    texts = served.api.user_texts(served.turn_request())
    assert any("Why is the sky blue?" in t for t in texts), texts
    assert texts[-1].endswith("What did I ask before?"), texts


def test_a_write_allowed_in_the_document_runs(served: Served) -> None:
    _story(served)
    out = served.folder / "allowed.txt"
    write = served.row.write(served.folder, "allowed.txt", "approved text")
    served.script([write], [{"type": "text", "text": "Written as asked."}])
    served.ask("Please write allowed.txt.")
    if served.row.asks is not None:  # it runs unasked where its own entry lets it
        served.idle_with("Written as asked.")
        assert out.read_text() == "approved text"
        assert "agentdoc:approval" not in served.doc.read_text()
        return
    wait_for(served.waiting, "the approval block", timeout=served.timeout)
    assert not out.exists()
    served.tick(served.row.allow)
    served.idle_with("Written as asked.")
    assert out.read_text() == "approved text"
    reply = served.reply(3)
    assert "agentdoc:approval" not in reply and "allowed in the document" in reply


def test_a_deny_with_a_reason_reaches_the_agent(served: Served) -> None:
    _story(served)
    if served.row.asks is not None:
        _refused_under_the_asking_policy(served)
        return
    out = served.folder / "rejected.txt"
    write = served.row.write(served.folder, "rejected.txt", "must not appear")
    served.script([write], [{"type": "text", "text": "Left alone."}])
    served.ask("Please write rejected.txt.")
    wait_for(served.waiting, "the approval block", timeout=served.timeout)
    served.tick(served.row.deny, below="> Not that file, please.\n")
    # Codex's "no" ends the whole turn (it says cancelled; agentdoc takes that as the turn's end
    # since it sent no cancel); the others go on to answer.
    wait_for(lambda: state_of(served.doc) in ENDED, "the turn's end", timeout=served.timeout)
    assert not out.exists()
    text = served.doc.read_text()
    assert "agentdoc:approval" not in text
    assert "denied in the document: Not that file, please." in text
    # The reason reaches the model: in the tool's result where the protocol has a field for it
    # (Claude Code's), else with the next prompt (ACP's answer has none).
    served.turn("Then what?", "Understood about the file.")
    sent = json.dumps([r.body for r in served.api.requests])
    assert "Not that file, please." in sent


def _refused_under_the_asking_policy(served: Served) -> None:
    """An agent with no mode that asks is refused under the default policy before its model
    is called, and the document and `agentdoc status` say what would let it run."""
    path = served.folder / "asked.md"
    asked_before = len(served.api.requests)
    path.write_text(DOC.format(name=asked(served.row)) + "Run the command, please.\n")
    wait_for(lambda: "has no mode that asks" in path.read_text(), "the callout",
             timeout=served.timeout)  # fmt: skip
    text = path.read_text()
    assert "may run every tool without asking" in text
    assert f'permission_mode = "bypassPermissions" under [agents.{asked(served.row)}]' in text
    assert document.parse(text).pending_prompt() == "Run the command, please."
    assert len(served.api.requests) == asked_before, "the prompt reached the model"
    shown = run_cli(["status", str(path)], served.env)
    assert "has no mode that asks" in shown.stdout, shown.stdout
    path.unlink()


def test_cancel_ends_the_reply_and_the_prompt_queued_below_it_is_sent(served: Served) -> None:
    _story(served)
    served.script(
        {"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 6},
        [{"type": "text", "text": "The queued answer."}],
    )
    served.ask("Tell me a long story.")
    served.api.wait_paused(timeout=served.timeout)
    wait_for(lambda: "word3" in served.doc.read_text(), "partial text", timeout=served.timeout)
    served.doc.write_text(served.doc.read_text() + "\n## User\n\nThe queued question?\n")
    wait_for(lambda: _queued(served), "the second prompt queued", timeout=served.timeout)
    cancelled = run_cli(["cancel", str(served.doc)], served.env, timeout=served.timeout)
    assert cancelled.returncode == 0, cancelled.stderr
    served.api.release()
    served.idle_with("The queued answer.")
    parsed = document.parse(served.doc.read_text())
    cut = parsed.turns[-4].content
    assert "word3" in cut and "word39" not in cut, cut
    assert "interrupted" in cut.lower() or "cancelled" in cut.lower(), cut
    assert parsed.turns[-3].content.strip() == "The queued question?"
    texts = served.api.user_texts(served.turn_request())
    assert texts[-1].endswith("The queued question?"), texts
    assert roles(served.doc)[-1] == "user"


def _queued(served: Served) -> bool:
    found = read_status(served.doc)
    return found is not None and found.queued


def _fork(served: Served, name: str, *at: str) -> Any:
    branch = served.folder / name
    forked = run_cli(["fork", *at, str(served.doc), str(branch)], served.env)
    assert forked.returncode == 0, forked.stderr
    return branch


def test_a_fork_remembers_the_conversation_up_to_its_turn(served: Served) -> None:
    """The fork's first prompt continues the agent's own copy of its conversation (the parent's
    turns arrive as the model's own messages), or a new session told the conversation so far;
    the fork's first footer says which. A fork at turn 1 has turn 1 and not turn 2."""
    _story(served)
    branch = _fork(served, "branch.md")
    served.turn("What did I ask first?", "The fork remembers the sky.", doc=branch)
    texts = served.api.user_texts(served.turn_request())
    assert texts[-1].endswith("What did I ask first?"), texts
    assert any("Why is the sky blue?" in t for t in texts), texts
    reply = document.parse(branch.read_text()).turns[-2].content
    assert served.row.fork_note in reply, reply
    if served.row.copies:
        first = [t for t in texts if "Why is the sky blue?" in t]
        assert "What did I ask first?" not in first[0], texts  # its own message
    branch.unlink()

    earlier = _fork(served, "earlier.md", "--turn", "1")
    served.turn("What have I asked so far?", "Only the sky so far.", doc=earlier)
    texts = served.api.user_texts(served.turn_request())
    assert texts[-1].endswith("What have I asked so far?"), texts
    assert any("Why is the sky blue?" in t for t in texts), texts
    assert not any("What did I ask before?" in t for t in texts), texts  # turn 2 is not in it
    if served.row.copies and not served.row.native:  # the copy the agent made after turn 1
        first = [t for t in texts if "Why is the sky blue?" in t]
        assert "What have I asked so far?" not in first[0], texts  # its own message
        reply = document.parse(earlier.read_text()).turns[-2].content
        assert served.row.fork_note in reply, reply
    earlier.unlink()


def _history(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Each message of a model call as (role, its text), in the Messages, Responses, Chat or
    Gemini shape; Gemini's "model" role reads "assistant"."""
    items = body.get("messages") or body.get("input") or body.get("contents") or []
    said = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("role"), str):
            role = "assistant" if item["role"] == "model" else item["role"]
            said.append((role, "".join(_texts(item.get("content", item.get("parts"))))))
    return said


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for part in value for text in _texts(part)]
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return [value["text"]]
    return []


def test_undo_takes_back_the_write_the_reply_and_the_agents_memory(served: Served) -> None:
    """`agentdoc undo` under the daemon: the file, the reply and the session's memory of the
    turn go; the prompt is held until saved again, then continues the agent's own copy of the
    session after the turn before, or a new session told the conversation before the undo."""
    _story(served)
    served.turn("Say hello.", "Hello there.")
    out = served.folder / "written.txt"
    write = served.row.write(served.folder, "written.txt", "the agent's text")
    served.script([write], [{"type": "text", "text": "Wrote written.txt."}])
    served.ask("Please write written.txt.")
    if served.row.asks is None:
        wait_for(served.waiting, "the approval block", timeout=served.timeout)
        served.tick(served.row.allow)
    served.idle_with("Wrote written.txt.")
    assert out.read_text() == "the agent's text"
    turns, sent = document.parse(served.doc.read_text()).turn_count(), len(served.api.requests)

    done = run_cli(["undo", str(served.doc)], served.env)
    assert done.returncode == 0, done.stderr
    assert f"took turn {turns}" in done.stdout and "1 file(s) restored" in done.stdout
    assert not out.exists()
    parsed = document.parse(served.doc.read_text())
    assert parsed.turn_count() == turns - 1
    assert parsed.pending_prompt() == "Please write written.txt."
    assert "Wrote written.txt." not in served.doc.read_text()
    # Polled in the status: the daemon logs the hold just before it writes it there.
    wait_for(
        lambda: "pending again after `agentdoc undo`" in held_reason(served.doc),
        "the daemon to hold the prompt",
        timeout=served.timeout,
    )
    assert len(served.api.requests) == sent

    served.script([{"type": "text", "text": "A fresh start."}])
    text = served.doc.read_text()
    served.doc.write_text(text.replace("Please write written", "Please do not write written"))
    served.idle_with("A fresh start.")
    last = served.turn_request()
    sent_body = json.dumps(last.body)
    # Nothing of the undone turn: not its prompt, its reply or its tool call (a session that
    # still held it would send them as earlier messages).
    for undone in ("Please write written.txt.", "Wrote written.txt.", "the agent's text"):
        assert undone not in sent_body, undone
    if served.row.copies:
        # The agent's own copy after the turn before: the earlier exchange is the request's
        # history (the model's own messages), not text in the prompt.
        history = _history(last.body)
        users = [text for role, text in history if role == "user"]
        assert any("Say hello." in text for text in users[:-1]), history
        assert ("assistant", "Hello there.") in history, history
        assert "Please do not write written.txt." in users[-1], history
    else:  # a new session, told the conversation before the undone turn in its prompt
        told = " ".join(served.api.user_texts(last))
        assert "Say hello." in told and "Hello there." in told
    assert not out.exists()


# The last test of a row: it leaves its prompt pending.
def test_an_api_error_ends_the_turn_failed_and_keeps_the_prompt(served: Served) -> None:
    _story(served)
    served.script({"status": 400, "message": "fake API refused this", "times": "always"})
    served.ask("This one fails.")
    wait_for(
        lambda: "agentdoc:unanswered" in served.doc.read_text() and state_of(served.doc) in ENDED,
        "the failure callout",
        timeout=served.timeout,
    )
    served.api.clear()
    text = served.doc.read_text()
    parsed = document.parse(text)
    assert parsed.pending_prompt() == "This one fails.", text[-1500:]
    assert "[!WARNING]" in text and state_of(served.doc) == "error", text[-1500:]
    notice = parsed.turns[-1].content
    if served.row.api_words is None:
        assert "fake API refused this" in notice, text[-1500:]  # the API's words
    else:  # no words to quote: the notice says what is known
        assert served.row.api_words[1] in notice, text[-1500:]
