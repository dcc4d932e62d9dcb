"""ACP agents through a whole turn (TurnRunner) and the daemon, with the scripted fake agent."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.config import Settings
from agentdoc.daemon.events import Event, Recheck
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.state import Loop
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError
from agentdoc.turn.runner import TurnRunner
from tests.support.acp import FakeAgent, caps, chunk, doc_text
from tests.support.clearance import own_leave
from tests.support.daemon import Running
from tests.support.waiting import wait_for

CLAUDE_SESSION = "1c0e5d6a-9a8e-4a51-a4c4-1bc2a8c0f4f5"


EARLIER = "## User\n\nwhat is 2+2?\n\n## Assistant\n\nIt is 4.\n\n"


@pytest.fixture
def fake(tmp_path: Path) -> Callable[[dict[str, Any]], FakeAgent]:
    return lambda script: FakeAgent(tmp_path, script)


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(doc_text(), encoding="utf-8")
    return path


def run(path: Path, agent: FakeAgent, **settings: Any) -> str:
    TurnRunner(path, agent.settings(**settings), clear=own_leave).run()
    return path.read_text(encoding="utf-8")


def test_a_reply_streams_in_thinking_to_the_sidecar_and_the_session_is_kept(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    gemini = caps()
    gemini["result"]["agentInfo"]["name"] = "gemini-cli"  # its quirks apply by the name it gives
    script = {
        "initialize": gemini,
        "session/prompt": {
            "steps": [chunk("****\nPondering", "agent_thought_chunk"), chunk("Hi "), chunk("you.")],
            "result": {
                "stopReason": "end_turn",
                "usage": {"totalTokens": 5, "inputTokens": 3, "outputTokens": 2},
            },
        },
    }
    agent = fake(script)
    text = run(doc, agent)
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert "Hi you." in parsed.turns[1].content
    assert "Pondering" not in text
    assert (parsed.meta.session, parsed.meta.session_agent) == ("sess-1", "fake")
    sidecar = doc.with_name("chat.thinking.md")
    assert "Pondering" in sidecar.read_text() and "****" not in sidecar.read_text()
    assert agent.prompts() == ["hello there"]


@pytest.mark.parametrize(
    ("capabilities", "extra", "footer", "sent_transcript"),
    [
        ({"sessionCapabilities": {"resume": {}}}, {}, "session resumed", False),
        (
            {"loadSession": True},
            {"session/load": {"steps": [chunk("OLD")], "result": {}}},
            "session loaded",
            False,
        ),
        (
            {"loadSession": True},
            {"session/load": {"error": {"code": -32603, "message": "Invalid session identifier"}}},
            "new session, sent the conversation so far",
            True,
        ),
    ],
    ids=["resume", "load", "load-fails"],
)
def test_the_next_turn_continues_the_agents_session_and_the_footer_says_how(
    tmp_path: Path,
    fake: Callable[[dict[str, Any]], FakeAgent],
    capabilities: dict[str, Any],
    extra: dict[str, Any],
    footer: str,
    sent_transcript: bool,
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(doc_text("agent: fake, session: old-1, session_agent: fake", EARLIER))
    agent = fake(
        {"initialize": caps(**capabilities), **extra, "session/prompt": {"steps": [chunk("Sure.")]}}
    )
    text = run(path, agent)
    last = document.parse(text).turns[-2].content
    assert footer in last
    assert "OLD" not in text
    (prompt,) = agent.prompts()
    assert ("It is 4." in prompt) == sent_transcript


def test_switching_a_document_to_another_agent_starts_a_seeded_session(
    tmp_path: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(doc_text(f"agent: fake, session: {CLAUDE_SESSION}", EARLIER))
    agent = fake(
        {
            "initialize": caps(loadSession=True, sessionCapabilities={"resume": {}}),
            "session/prompt": {"steps": [chunk("Carried on.")]},
        }
    )
    text = run(path, agent)
    assert not agent.received("session/resume") and not agent.received("session/load")
    (prompt,) = agent.prompts()
    assert "It is 4." in prompt and "hello there" in prompt
    parsed = document.parse(text)
    assert (
        "new fake session, sent the conversation so far (it was with claude)"
        in parsed.turns[-2].content
    )
    assert (parsed.meta.session, parsed.meta.session_agent) == ("sess-1", "fake")


OPTIONS = [
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def permission_script(raw_input: dict[str, Any]) -> dict[str, Any]:
    call = {"toolCallId": "t1", "title": "Write notes.txt", "kind": "edit", "rawInput": raw_input}
    return {
        "session/prompt": {
            "steps": [
                chunk("Let me write."),
                {"permission": {"toolCall": call, "options": OPTIONS}},
                chunk(" Done."),
            ],
        }
    }


def test_a_permission_shows_one_box_per_option_and_the_ticked_one_is_sent(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    agent = fake(permission_script({"path": "notes.txt"}))
    runner = TurnRunner(doc, agent.settings(), clear=own_leave)
    thread = threading.Thread(target=runner.run)
    thread.start()
    wait_for(lambda: "agentdoc:approval " in doc.read_text(), "the approval block")
    text = doc.read_text()
    assert "fake wants to use **Write notes.txt**" in text
    for option in OPTIONS:
        assert f"> - [ ] {option['name']}" in text
    doc.write_text(text.replace("> - [ ] Allow for this session", "> - [x] Allow for this session"))
    thread.join(30)
    assert not thread.is_alive()
    assert agent.answers() == [{"outcome": {"outcome": "selected", "optionId": "always"}}]
    assert "Let me write. Done." in doc.read_text().replace("\n", " ")


def test_a_request_on_the_document_itself_is_refused_without_asking(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    agent = fake(permission_script({"filePath": str(doc), "content": "ha"}))
    text = run(doc, agent)
    assert "agentdoc:approval " not in text
    assert agent.answers() == [{"outcome": {"outcome": "selected", "optionId": "reject"}}]


def test_an_error_before_any_text_keeps_the_prompt_pending(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    agent = fake(
        {
            "session/prompt": {
                "error": {
                    "code": -32603,
                    "message": "Internal error",
                    "data": {"details": "API 503"},
                }
            }
        }
    )
    text = run(doc, agent)
    parsed = document.parse(text)
    assert parsed.turns[-1].role == "assistant"  # no new ## User: the prompt stays pending
    assert "fake failed: Internal error: API 503" in text
    assert parsed.meta.session is None


def test_a_missing_agent_program_leaves_the_document_untouched(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    before = doc.read_bytes()
    settings = Settings.model_validate({"agents": {"fake": {"command": ["no-such-agent-program"]}}})
    with pytest.raises(AgentdocError, match="cannot find 'no-such-agent-program'"):
        TurnRunner(doc, settings, clear=own_leave).run()
    assert doc.read_bytes() == before


def test_a_cancel_sends_session_cancel_and_keeps_the_partial_text(
    doc: Path, fake: Callable[[dict[str, Any]], FakeAgent]
) -> None:
    agent = fake(
        {
            "session/prompt": {
                "steps": [chunk("Partial"), {"until_cancel": True}],
                "result": {"stopReason": "cancelled"},
            }
        }
    )
    cancel = threading.Event()
    runner = TurnRunner(doc, agent.settings(), clear=own_leave, cancel=cancel)
    outcome: list[Any] = []
    thread = threading.Thread(target=lambda: outcome.append(runner.run()))
    thread.start()
    wait_for(lambda: "Partial" in doc.read_text(), "the partial text")
    cancel.set()
    thread.join(30)
    assert agent.received("session/cancel")
    assert outcome[0].state in ("cancelled", "interrupted")
    assert "Partial" in doc.read_text()


def roles(path: Path) -> list[str]:
    return [t.role for t in document.parse(path.read_text()).turns]


def asked_twice(folder: Path, path: Path, agent: FakeAgent) -> int:
    """Two questions saved into `path` one after the other, each answered, by a daemon keeping
    warm agents; how many agent processes its pool started."""
    settings = agent.settings(warm_sessions=2, settle_step=0.1, settle_max=1.0)
    with Running(Daemon([folder], settings, rescan_interval=0.5)) as daemon:
        path.write_text(path.read_text() + "first question\n")
        wait_for(lambda: roles(path) == ["user", "assistant", "user"], "the first reply")
        path.write_text(path.read_text() + "second question\n")
        wait_for(lambda: len(roles(path)) == 5, "the second reply")
        assert daemon.pool is not None
        return daemon.pool.started


def test_the_daemon_keeps_one_warm_agent_for_a_documents_turns(
    fake: Callable[[dict[str, Any]], FakeAgent], folder: Path
) -> None:
    path = folder / "chat.md"
    path.write_text("---\nagentdoc: {agent: fake}\n---\n\n## User\n\n")
    script = {
        "initialize": caps(sessionCapabilities={"resume": {}}),
        "session/prompt": {"steps": [chunk("Answer.")]},
    }
    agent = fake(script)
    assert asked_twice(folder, path, agent) == 1  # processes started
    assert len(agent.received("initialize")) == 1
    assert not agent.received("session/resume")
    assert [p.split("\n")[-1] for p in agent.prompts()] == ["first question", "second question"]
    assert path.read_text().count("Answer.") == 2


def test_a_warm_agent_that_dies_unheard_is_replaced_within_the_turn(
    fake: Callable[[dict[str, Any]], FakeAgent], folder: Path, tmp_path: Path
) -> None:
    """The warm agent exits as the second prompt reaches it, having said nothing: the turn is
    begun again on a fresh agent, which answers it (its first prompt, the script's first
    answer), and the document reads as if nothing had happened."""
    path = folder / "chat.md"
    path.write_text("---\nagentdoc: {agent: fake}\n---\n\n## User\n\n")
    crash = {"steps": [{"crash": 1, "once": str(tmp_path / "crashed")}]}
    script = {
        "initialize": caps(sessionCapabilities={"resume": {}}),
        "session/prompt": [{"steps": [chunk("Answer.")]}, crash],
    }
    agent = fake(script)
    assert asked_twice(folder, path, agent) == 2  # processes started
    assert path.read_text().count("Answer.") == 2 and "interrupted" not in path.read_text()
    sent = [p.split("\n")[-1] for p in agent.prompts()]
    assert sent == ["first question", "second question", "second question"]


def test_a_prompt_whose_turn_fails_at_once_is_not_sent_again_unasked(
    fake: Callable[[dict[str, Any]], FakeAgent], folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a reply the daemon looks at the file once more, a settle step later, for a prompt
    saved while the reply streamed. A turn begun before that look took whatever prompt there
    was: when it fails at once (an API refusal), its prompt waits for the person's next save,
    and the late look must not send it again."""
    path = folder / "chat.md"
    path.write_text("---\nagentdoc: {agent: fake}\n---\n\n## User\n\n")
    refused = {"error": {"code": -32603, "message": "Internal error", "data": {"details": "401"}}}
    script = {
        "initialize": caps(sessionCapabilities={"resume": {}}),
        "session/prompt": [{"steps": [chunk("Answer.")]}, refused],
    }
    agent = fake(script)
    # The look the first reply asks for is held back until the second turn has failed.
    held: list[Event] = []
    after_settling = Loop.after_settling

    def holding(loop: Loop, event: Event) -> None:
        if isinstance(event, Recheck) and not held:
            held.append(event)
        else:
            after_settling(loop, event)

    monkeypatch.setattr(Loop, "after_settling", holding)
    handled = threading.Event()
    settings = agent.settings(warm_sessions=1, settle_step=0.1, settle_max=1.0)
    with Running(Daemon([folder], settings, rescan_interval=0.5)) as daemon:
        dispatch = daemon._dispatch

        def noting(event: Event) -> None:
            dispatch(event)
            if held and event is held[0]:
                handled.set()

        monkeypatch.setattr(daemon, "_dispatch", noting)
        path.write_text(path.read_text() + "first question\n")
        wait_for(lambda: bool(held), "the look after the first reply")
        path.write_text(path.read_text() + "second question\n")
        wait_for(lambda: "failed: Internal error" in path.read_text(), "the second turn's failure")
        wait_for(lambda: daemon._docs[path].thread is None, "the failure taken in")
        daemon.loop.put(held[0])
        assert handled.wait(10)
        assert daemon._docs[path].begun == 2  # no third turn
    assert [p.split("\n")[-1] for p in agent.prompts()] == ["first question", "second question"]


def test_agentdoc_run_works_with_an_acp_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = FakeAgent(tmp_path, {"session/prompt": {"steps": [chunk("From the fake agent.")]}})
    config = tmp_path / "agentdoc-config.toml"
    command = ", ".join(f'"{part}"' for part in agent.command)
    config.write_text(f"[agents.fake]\ncommand = [{command}]\n")
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    path = tmp_path / "chat.md"
    path.write_text(doc_text())
    result = CliRunner().invoke(cli, ["run", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "From the fake agent." in path.read_text()
