"""An agent that retries a failed API request without telling its ACP client (OpenCode says so
only in its log) shows `retrying` with the reason: its log line becomes the neutral `Retrying`
event, which the document and the live line show while the agent waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentdoc.agents.acp.launch import agent_env
from agentdoc.agents.acp.quirks import quirks_for
from agentdoc.agents.acp.translate import UpdateTranslator
from agentdoc.agents.base.events import PermissionAsked, Retrying, TurnEnd
from agentdoc.document import retry_words
from tests.support.acp import Agent, caps, events_of, next_of
from tests.support.waiting import wait_for

# A line of OpenCode 1.18's log (on stderr with OPENCODE_PRINT_LOGS=1) for a 529 it retries.
LOG_LINE = (
    'timestamp=2026-11-25T17:32:18.168Z level=ERROR run=32d6326f message="stream error" '
    "providerID=fake modelID=m session.id={session} small=false agent=build mode=primary "
    'error.error="AI_APICallError: Overloaded"'
)


# The line of its next request in that session: after a failed one, a retry.
NEXT_LINE = (
    "timestamp=2026-11-25T17:32:19.702Z level=INFO run=32d6326f message=stream "
    "providerID=fake modelID=m session.id={session} small=false agent=build mode=primary"
)


def test_opencodes_log_line_names_the_session_and_the_error() -> None:
    pattern = quirks_for("OpenCode").retry_log
    assert pattern is not None
    found = pattern.search(LOG_LINE.format(session="ses_abc"))
    assert found is not None and (found["session"], found["error"]) == ("ses_abc", "Overloaded")
    assert not pattern.search("level=INFO message=stream session.id=ses_abc agent=build")
    title = LOG_LINE.format(session="ses_abc").replace("small=false", "small=true")
    assert not pattern.search(title)  # the title request beside the turn's
    assert quirks_for("gemini-cli").retry_log is None
    again = quirks_for("OpenCode").retry_next
    assert again is not None
    found = again.search(NEXT_LINE.format(session="ses_abc"))
    assert found is not None and found["session"] == "ses_abc"
    assert not again.search(LOG_LINE.format(session="ses_abc"))  # the failure itself
    assert not again.search(NEXT_LINE.format(session="ses_abc").replace("false", "true"))


def test_each_retry_counts_and_says_what_failed() -> None:
    translator = UpdateTranslator()
    assert translator.retrying("Overloaded") == [Retrying(1, error="Overloaded")]
    assert translator.retrying(" ") == [Retrying(2, error=None)]
    assert retry_words(Retrying(1, error="Overloaded")) == (
        "API error (Overloaded): retrying (attempt 2)"
    )
    # Claude says how often and when: unchanged.
    claude = Retrying(1, max_retries=10, delay_ms=2000, error_status=529, error="overloaded")
    assert retry_words(claude) == "API error (529 overloaded): retrying 1/10 in 2.0 s"


def test_opencode_logs_to_stderr_unless_its_entry_says_otherwise() -> None:
    opencode = ["/usr/lib/node_modules/.bin/opencode", "acp"]
    assert agent_env({}, {}, opencode)["OPENCODE_PRINT_LOGS"] == "1"
    assert agent_env({}, {"OPENCODE_PRINT_LOGS": "0"}, opencode)["OPENCODE_PRINT_LOGS"] == "0"
    assert "OPENCODE_PRINT_LOGS" not in agent_env({}, {}, ["gemini", "--acp"])


def _script(session: str, retried: bool = True) -> dict[str, Any]:
    options = [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]
    again = [{"stderr": NEXT_LINE.format(session=session)}] if retried else []
    return {
        "initialize": {"result": caps()["result"] | {"agentInfo": {"name": "OpenCode"}}},
        "session/prompt": {
            "steps": [
                {"stderr": NEXT_LINE.format(session="sess-1")},
                {"stderr": LOG_LINE.format(session=session)},
                *again,
                # It waits here until the test has seen what it looks for.
                {"permission": {"toolCall": {"toolCallId": "t1"}, "options": options}},
            ],
            "result": {"stopReason": "end_turn"},
        },
    }


def _started(
    agent: Callable[..., Agent], session: str, retried: bool = True
) -> tuple[Agent, list[str]]:
    """The fake OpenCode, and the stderr lines its process has handled so far."""
    fake = agent(_script(session, retried), start=False)
    told: list[str] = []
    handle = fake.process.connection.on_stderr_line
    assert handle is not None

    def spy(line: str) -> None:
        handle(line)
        told.append(line)

    fake.process.connection.on_stderr_line = spy
    fake.process.start()
    return fake, told


def _took(turn: Any, into: list[Any], kind: type[Any]) -> bool:
    """Take the turn's next event into `into`; whether it was a `kind`."""
    event = turn.next_event(0.1)
    if event is not None:
        into.append(event)
    return isinstance(event, kind)


def test_a_retry_in_the_log_reaches_the_turn_of_that_session(
    agent: Callable[..., Agent],
) -> None:
    fake, told = _started(agent, "sess-1")
    turn = fake.process.begin("hi", turn=1)
    # The log line (stderr) and the permission request (stdout) come on two pipes, in either
    # order: both are awaited before the answer, and the turn's events are taken in full.
    before: list[Any] = []
    wait_for(lambda: _took(turn, before, PermissionAsked), "the permission request")
    wait_for(lambda: any("stream error" in line for line in told), "the log line handled")
    asked = before[-1]
    assert turn.answer(asked.request_id, "yes")
    events = events_of(turn)
    assert isinstance(events[-1], TurnEnd)
    retries = [e for e in [*before, *events] if isinstance(e, Retrying)]
    assert retries == [Retrying(1, error="Overloaded")]


def test_another_sessions_retry_is_not_this_turns(agent: Callable[..., Agent]) -> None:
    fake, told = _started(agent, "sess-other")
    turn = fake.process.begin("hi", turn=1)
    asked = next_of(turn, PermissionAsked)
    wait_for(lambda: any("sess-other" in line for line in told), "the log line handled")
    assert turn.answer(asked.request_id, "yes")
    assert not any(isinstance(e, Retrying) for e in events_of(turn))


def test_a_failed_request_not_tried_again_is_no_retry(agent: Callable[..., Agent]) -> None:
    """OpenCode logs a 400 as it does a 529, and does not try it again: no `retrying`."""
    fake, told = _started(agent, "sess-1", retried=False)
    turn = fake.process.begin("hi", turn=1)
    before: list[Any] = []
    wait_for(lambda: _took(turn, before, PermissionAsked), "the permission request")
    wait_for(lambda: any("stream error" in line for line in told), "the log line handled")
    assert turn.answer(before[-1].request_id, "yes")
    events = [*before, *events_of(turn)]
    assert isinstance(events[-1], TurnEnd)
    assert not any(isinstance(e, Retrying) for e in events), events
