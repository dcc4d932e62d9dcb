"""The ACP client against the scripted fake agent: handshake, sessions, turns, failures."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.sessions import reopen_way
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.events import (
    BlockDelta,
    PermissionAsked,
    PermissionWithdrawn,
    SessionStarted,
    ToolCall,
    ToolUpdate,
)
from agentdoc.agents.base.prompt import WORD_JOINER
from agentdoc.errors import AgentCannotStart
from tests.support.acp import Agent, caps, chunk, end_of, events_of, next_of, text_of
from tests.support.waiting import wait_for

# -- a turn ----------------------------------------------------------------------------------


def test_a_reply_streams_and_ends(agent: Callable[..., Agent]) -> None:
    script = {
        "session/prompt": {
            "steps": [
                {
                    "update": {
                        "sessionUpdate": "agent_thought_chunk",
                        "content": {"type": "text", "text": "hmm"},
                    }
                },
                chunk("Hello"),
                chunk(", world"),
            ],
            "result": {
                "stopReason": "end_turn",
                "usage": {"totalTokens": 9, "inputTokens": 6, "outputTokens": 3},
            },
        }
    }
    fake = agent(script)
    turn = fake.process.begin("hi", turn=1)
    events = events_of(turn)
    assert text_of(events) == "hmmHello, world"
    end = end_of(events)
    assert (end.stop_reason, end.session_id, end.usage and end.usage.output_tokens) == (
        "end_turn",
        "sess-1",
        3,
    )
    assert events[0] == SessionStarted("sess-1")
    assert turn.close(1.0) is None
    assert not fake.process.busy and fake.process.alive()
    (prompt,) = fake.received("session/prompt")
    assert prompt["params"] == {"sessionId": "sess-1", "prompt": [{"type": "text", "text": "hi"}]}


def test_a_leading_slash_is_sent_as_text_not_as_the_agents_command(
    agent: Callable[..., Agent],
) -> None:
    fake = agent({})
    events_of(fake.process.begin("  /init please", turn=1))
    (prompt,) = fake.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": f"  {WORD_JOINER}/init please"}]


def test_a_warm_second_turn_continues_the_session(agent: Callable[..., Agent]) -> None:
    fake = agent({})
    first = fake.process.begin("one")
    events_of(first)
    first.close(1.0)
    second = fake.process.begin("two", session_id="sess-1")
    assert fake.process.opened is not None and fake.process.opened.how == "continued"
    assert end_of(events_of(second)).session_id == "sess-1"
    assert len(fake.received("session/new")) == 1
    assert len(fake.received("initialize")) == 1


def test_tool_calls_and_a_permission_answered(agent: Callable[..., Agent]) -> None:
    call = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Write a.txt",
        "kind": "edit",
        "status": "pending",
    }
    options = [
        {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
        {"optionId": "no", "name": "Reject", "kind": "reject_once"},
    ]
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
    script = {
        "session/prompt": {
            "steps": [
                {"update": call},
                {
                    "permission": {
                        "toolCall": {"toolCallId": "t1", "title": "Write a.txt"},
                        "options": options,
                    }
                },
                {"update": done},
                chunk("written"),
            ],
            "result": {"stopReason": "end_turn"},
        }
    }
    fake = agent(script)
    turn = fake.process.begin("write it")
    asked = next_of(turn, PermissionAsked)
    assert [o.kind for o in asked.options] == ["allow_once", "reject_once"]
    assert turn.answer(asked.request_id, "yes")
    assert not turn.answer(asked.request_id, "yes")  # answered once only
    events = events_of(turn)
    assert [type(e) for e in events if isinstance(e, ToolCall | ToolUpdate)] == [ToolUpdate]
    assert text_of(events) == "written"
    answers = [m for m in fake.received() if "result" in m and "outcome" in m["result"]]
    assert answers[0]["result"] == {"outcome": {"outcome": "selected", "optionId": "yes"}}


def test_a_permission_open_during_cancel_is_answered_cancelled(agent: Callable[..., Agent]) -> None:
    options = [{"optionId": "yes", "name": "Allow", "kind": "allow_once"}]
    script = {
        "session/prompt": {
            "steps": [
                chunk("about to"),
                {"permission": {"toolCall": {"toolCallId": "t1"}, "options": options}},
            ],
            "result": {"stopReason": "cancelled"},
        }
    }
    fake = agent(script)
    turn = fake.process.begin("go")
    asked = next_of(turn, PermissionAsked)
    turn.cancel()
    events = events_of(turn)
    assert PermissionWithdrawn(asked.request_id) in events
    end = end_of(events)
    assert (end.stop_reason, end.interrupted) == ("cancelled", True)
    assert not turn.answer(asked.request_id, "yes")
    assert fake.received("session/cancel") == [
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess-1"}}
    ]
    answers = [m for m in fake.received() if "result" in m and "outcome" in m["result"]]
    assert answers == [
        {"jsonrpc": "2.0", "id": "agent-1", "result": {"outcome": {"outcome": "cancelled"}}}
    ]


def test_a_cancel_the_agent_ignores_stops_the_process(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/prompt": {"steps": [chunk("working"), {"hang": True}]}})
    turn = fake.process.begin("go")
    next_of(turn, BlockDelta)
    turn.cancel_grace = 0.3
    turn.cancel()
    end = end_of(events_of(turn))
    assert (end.stop_reason, end.interrupted) == ("cancelled", True)
    wait_for(lambda: not fake.process.alive(), "the agent to be stopped", timeout=10)


def test_requests_we_did_not_offer_get_an_error(agent: Callable[..., Agent]) -> None:
    script = {
        "session/prompt": {
            "steps": [
                {"request": {"method": "fs/read_text_file", "params": {"path": "/etc/passwd"}}},
                {"request": {"method": "terminal/create", "params": {"command": "rm"}}},
                chunk("fine"),
            ]
        }
    }
    fake = agent(script)
    events = events_of(fake.process.begin("go"))
    assert text_of(events) == "fine"
    errors = [m["error"]["code"] for m in fake.received() if "error" in m]
    assert errors == [-32601, -32601]


def test_unknown_notifications_and_updates_are_ignored(agent: Callable[..., Agent]) -> None:
    script = {
        "session/prompt": {
            "steps": [
                {"update": {"sessionUpdate": "available_commands_update", "availableCommands": []}},
                {"update": {"sessionUpdate": "something_else_entirely"}},
                {"stdout": json.dumps({"jsonrpc": "2.0", "method": "x/unknown", "params": {}})},
                chunk("ok"),
            ]
        }
    }
    events = events_of(agent(script).process.begin("go"))
    assert text_of(events) == "ok"
    assert end_of(events).stop_reason == "end_turn"


# -- failures in a turn ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "answer", "error_has", "text"),
    [
        pytest.param(
            [chunk("part"), {"stderr": "fatal: boom"}, {"crash": 3}],
            {},
            ["exited with code 3", "boom"],
            "part",
            id="crash-mid-turn",
        ),
        pytest.param(
            [],
            {
                "error": {
                    "code": -32603,
                    "message": "Internal error",
                    "data": {"details": "API 500"},
                }
            },
            ["fake failed", "API 500"],
            "",
            id="api-error-before-text",
        ),
        pytest.param(
            [chunk("half")],
            {"error": {"code": -32603, "message": "stream broke"}},
            ["stream broke"],
            "half",
            id="api-error-after-text",
        ),
        pytest.param(
            [],
            {"error": {"code": -32000, "message": "Authentication required"}},
            ["log in"],
            "",
            id="auth-required-at-prompt",
        ),
        pytest.param([], {"result": {"no": "stop reason"}}, ["not ACP"], "", id="garbage-answer"),
        pytest.param(
            [{"stdout": "this is not json"}, {"crash": 1}],
            {},
            ["this is not json"],
            "",
            id="garbage-line-then-exit",
        ),
    ],
)
def test_a_turn_that_fails_ends_with_a_clear_error(
    agent: Callable[..., Agent],
    steps: list[Any],
    answer: dict[str, Any],
    error_has: list[str],
    text: str,
) -> None:
    fake = agent({"session/prompt": {"steps": steps, **answer}})
    events = events_of(fake.process.begin("go"))
    end = end_of(events)
    assert end.stop_reason == "error"
    assert all(part in (end.error or "") for part in error_has), end.error
    assert text_of(events) == text


def test_stop_ends_a_stalled_turn(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/prompt": {"steps": [{"hang": True}]}})
    turn = fake.process.begin("go")
    assert isinstance(turn.next_event(1.0), SessionStarted)
    assert turn.next_event(0.2) is None  # stalled: the caller is never blocked
    turn.stop(grace=0.5)
    end = turn.close(1.0)
    assert end is not None and end.stop_reason == "cancelled" and end.interrupted
    assert not fake.process.alive()


# -- the handshake ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "options", "message_has"),
    [
        pytest.param(
            {"initialize": {"silent": True}},
            {"handshake_timeout": 0.5},
            "did not answer initialize",
            id="timeout",
        ),
        pytest.param(  # time for the agent to start and say it, even on a busy machine
            {"initialize": {"raw": "Welcome to fake!"}},
            {"handshake_timeout": 5.0},
            "Welcome to fake!",
            id="garbage-then-silence",
        ),
        pytest.param(
            {"initialize": {"steps": [{"stderr": "no config"}, {"crash": 2}]}},
            {},
            "exited with code 2",
            id="crash",
        ),
        pytest.param(
            {"initialize": {"result": {"protocolVersion": 2}}},
            {},
            "speaks ACP version 2",
            id="unknown-version",
        ),
        pytest.param({"initialize": {"result": {"hello": 1}}}, {}, "not ACP", id="not-acp"),
        pytest.param(
            {"initialize": {"error": {"code": -32603, "message": "nope"}}}, {}, "nope", id="error"
        ),
    ],
)
def test_a_failed_handshake_says_why(
    agent: Callable[..., Agent], script: dict[str, Any], options: dict[str, Any], message_has: str
) -> None:
    fake = agent(script, start=False, **options)
    with pytest.raises(AgentCannotStart, match="fake") as failure:
        fake.process.start()
    assert message_has in str(failure.value)
    wait_for(lambda: not fake.process.alive(), "the agent to be stopped", timeout=10)


def test_a_missing_binary_says_so(tmp_path: Path) -> None:
    process = AcpProcess(
        ["no-such-agent-here", "acp"],
        tmp_path,
        {"PATH": str(tmp_path)},
        name="mine",
        clearance=Clearance.scratch(tmp_path),
    )
    with pytest.raises(AgentCannotStart, match="cannot find 'no-such-agent-here'"):
        process.start()


def test_auth_required_before_the_session_names_the_ways_to_log_in(
    agent: Callable[..., Agent],
) -> None:
    init = caps()
    init["result"]["authMethods"] = [{"id": "key", "name": "Use MY_API_KEY"}]
    fake = agent(
        {
            "initialize": init,
            "session/new": {"error": {"code": -32000, "message": "Authentication required"}},
        }
    )
    with pytest.raises(AgentCannotStart, match="log in") as failure:
        fake.process.begin("hi")
    assert "Use MY_API_KEY" in str(failure.value)
    assert not fake.process.busy


# -- choosing the session --------------------------------------------------------------------

REPLAY = [
    {
        "update": {
            "sessionUpdate": "user_message_chunk",
            "content": {"type": "text", "text": "old prompt"},
        }
    },
    chunk("OLD REPLY"),
    {
        "update": {
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": "old thought"},
        }
    },
]


@pytest.mark.parametrize(
    ("capabilities", "extra", "fork", "how", "method", "session"),
    [
        (
            {"sessionCapabilities": {"resume": {}}, "loadSession": True},
            {},
            False,
            "resumed",
            "session/resume",
            "old",
        ),
        (
            {"loadSession": True},
            {"session/load": {"steps": REPLAY, "result": {}}},
            False,
            "loaded",
            "session/load",
            "old",
        ),
        ({}, {}, False, "seeded", "session/new", "sess-1"),
        (
            {"sessionCapabilities": {"resume": {}}},
            {"session/resume": {"error": {"code": -32002, "message": "gone"}}},
            False,
            "seeded",
            "session/new",
            "sess-1",
        ),
        (
            {"loadSession": True},
            {"session/load": {"error": {"code": -32603, "message": "Invalid session identifier"}}},
            False,
            "seeded",
            "session/new",
            "sess-1",
        ),
        (
            {"sessionCapabilities": {"fork": {}, "resume": {}}},
            {"session/fork": {"result": {"sessionId": "forked-1"}}},
            True,
            "forked",
            "session/fork",
            "forked-1",
        ),
        ({"sessionCapabilities": {"resume": {}}}, {}, True, "seeded", "session/new", "sess-1"),
    ],
    ids=["resume", "load", "neither", "resume-fails", "load-fails", "fork", "no-fork"],
)
def test_the_session_is_resumed_loaded_forked_or_seeded(
    agent: Callable[..., Agent],
    capabilities: dict[str, Any],
    extra: dict[str, Any],
    fork: bool,
    how: str,
    method: str,
    session: str,
) -> None:
    fake = agent({"initialize": caps(**capabilities), **extra})
    seeded = "User: earlier\n\nnext"
    turn = fake.process.begin("next", session_id="old", fork=fork, seeded_prompt=seeded)
    events = events_of(turn)
    assert fake.process.opened is not None and fake.process.opened.how == how
    assert end_of(events).session_id == session
    assert "OLD" not in text_of(events) and "old" not in text_of(events)  # no replay in the turn
    assert fake.received(method)
    (prompt,) = fake.received("session/prompt")
    texts = [block["text"] for block in prompt["params"]["prompt"]]
    assert texts == ([seeded] if how == "seeded" else ["next"])


def test_a_new_document_gets_a_plain_new_session(agent: Callable[..., Agent]) -> None:
    fake = agent({})
    events_of(fake.process.begin("first"))
    assert fake.process.opened is not None and fake.process.opened.how == "new"


def test_switching_to_this_agent_seeds_a_new_session(agent: Callable[..., Agent]) -> None:
    fake = agent({"initialize": caps(loadSession=True, sessionCapabilities={"resume": {}})})
    events_of(fake.process.begin("next", seeded_prompt="the other agent's conversation\n\nnext"))
    assert fake.process.opened is not None and fake.process.opened.how == "seeded"
    assert not fake.received("session/resume") and not fake.received("session/load")


def test_a_session_that_cannot_be_continued_says_why(agent: Callable[..., Agent]) -> None:
    script = {
        "initialize": caps(loadSession=True),
        "session/load": {"error": {"code": -32603, "message": "Invalid session identifier"}},
    }
    fake = agent(script)
    events_of(fake.process.begin("next", session_id="old"))
    opened = fake.process.opened
    assert opened is not None and opened.how == "new"
    assert opened.note == "fake could not continue its session (Invalid session identifier)"


@pytest.mark.parametrize(
    ("resume", "load", "fork_offered", "fork", "way"),
    [
        (True, True, True, False, ("session/resume", "resumed")),
        (False, True, True, False, ("session/load", "loaded")),
        (False, False, True, False, "cannot resume or load a session"),
        (True, True, True, True, ("session/fork", "forked")),
        (True, True, False, True, "cannot fork a session"),
    ],
)
def test_the_way_to_continue_a_session(
    resume: bool, load: bool, fork_offered: bool, fork: bool, way: object
) -> None:
    assert reopen_way(resume, load, fork_offered, fork=fork) == way


# -- starting in the background (the daemon's pool must never wait for an agent) ------------


@pytest.mark.serial
def test_a_background_turn_returns_at_once_and_streams_after_the_handshake(
    agent: Callable[..., Agent],
) -> None:
    fake = agent(
        {
            "initialize": {**caps(), "steps": [{"delay": 0.5}]},
            "session/prompt": {"steps": [chunk("late")]},
        },
        start=False,
    )
    fake.process.spawn()
    began = time.monotonic()
    turn = fake.process.begin("hi", background=True)
    assert time.monotonic() - began < 0.4
    assert fake.process.busy
    events = events_of(turn)
    assert isinstance(events[0], SessionStarted)
    assert text_of(events) == "late"


def test_an_agent_that_exits_as_it_first_starts_is_started_once_more(
    agent: Callable[..., Agent], tmp_path: Path
) -> None:
    """Two OpenCode processes starting at once on a fresh machine both create its database,
    and one exits in the handshake (seen under load): nothing was asked of it, so it is started
    again, and the turn goes on."""
    crash = {"crash": 1, "once": str(tmp_path / "crashed-once")}
    fake = agent({"initialize": {"steps": [crash]}})
    assert text_of(events_of(fake.process.begin("hi", turn=1))) == ""
    assert len(fake.received("initialize")) == 2 and len(fake.received("session/prompt")) == 1


def test_an_agent_stopped_in_its_handshake_is_not_started_again(
    agent: Callable[..., Agent],
) -> None:
    """The daemon stopping (or a pool closing) an agent that is still shaking hands: its exit
    is the stop, not a failed first start, so nothing is started after it."""
    fake = agent({"initialize": {"steps": [{"hang": True}]}}, start=False)
    fake.process.spawn()
    failed: list[AgentCannotStart] = []

    def shake() -> None:
        try:
            fake.process.ready()
        except AgentCannotStart as exc:
            failed.append(exc)

    thread = threading.Thread(target=shake)
    thread.start()
    wait_for(lambda: bool(fake.received("initialize")), "the handshake")
    fake.process.close(grace=1.0)
    thread.join(30)
    assert failed and len(fake.received("initialize")) == 1


@pytest.mark.parametrize(
    ("script", "error_has"),
    [
        pytest.param(
            {"initialize": {"result": {"protocolVersion": 7}}}, "speaks ACP version 7", id="version"
        ),
        pytest.param(
            {"session/new": {"error": {"code": -32000, "message": "Authentication required"}}},
            "log in",
            id="auth",
        ),
        pytest.param({"initialize": {"steps": [{"crash": 4}]}}, "exited with code 4", id="crash"),
    ],
)
def test_a_background_turn_that_cannot_begin_ends_with_the_reason(
    agent: Callable[..., Agent], script: dict[str, Any], error_has: str
) -> None:
    fake = agent(script, start=False)
    fake.process.spawn()
    turn = fake.process.begin("hi", background=True)
    events = events_of(turn)
    end = end_of(events)
    assert end.stop_reason == "error" and error_has in (end.error or "")
    assert turn.close(1.0) is None
    assert not fake.process.busy
    assert not fake.received("session/prompt")


def test_a_cancel_while_the_session_opens_sends_no_prompt(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/new": {"steps": [{"delay": 0.5}], "result": {"sessionId": "s"}}})
    turn = fake.process.begin("hi", background=True)
    turn.cancel()
    end = end_of(events_of(turn))
    assert (end.stop_reason, end.interrupted) == ("cancelled", True)
    assert not fake.received("session/prompt")


def test_stop_asks_the_agent_to_cancel_first_and_keeps_a_willing_one(
    agent: Callable[..., Agent],
) -> None:
    script = {
        "session/prompt": {
            "steps": [chunk("working"), {"until_cancel": True}],
            "result": {"stopReason": "cancelled"},
        }
    }
    fake = agent(script)
    turn = fake.process.begin("go")
    next_of(turn, BlockDelta)
    turn.stop(grace=5.0)
    end = end_of(events_of(turn))
    assert (end.stop_reason, end.interrupted) == ("cancelled", True)
    assert fake.received("session/cancel")
    assert fake.process.alive()  # a warm agent stays for the next turn


@pytest.mark.parametrize(
    ("capabilities", "extra", "note"),
    [
        ({"sessionCapabilities": {"resume": {}}}, {}, "session resumed"),
        ({"loadSession": True}, {}, "session loaded"),
        (
            {"loadSession": True},
            {"session/load": {"error": {"code": -32603, "message": "gone"}}},
            "new session, sent the conversation so far "
            "(fake could not continue its session (gone))",
        ),
    ],
)
def test_the_turn_says_how_its_session_came_about(
    agent: Callable[..., Agent], capabilities: dict[str, Any], extra: dict[str, Any], note: str
) -> None:
    fake = agent({"initialize": caps(**capabilities), **extra})
    events = events_of(fake.process.begin("x", session_id="old", seeded_prompt="seeded x"))
    started = events[0]
    assert isinstance(started, SessionStarted) and started.note == note


def test_a_cancelled_stop_we_did_not_ask_for_ends_the_turn(agent: Callable[..., Agent]) -> None:
    fake = agent(
        {"session/prompt": {"steps": [chunk("ok")], "result": {"stopReason": "cancelled"}}}
    )
    end = end_of(events_of(fake.process.begin("go")))
    assert (end.stop_reason, end.interrupted) == ("end_turn", False)


def test_pictures_go_after_the_text_to_an_agent_that_takes_them(
    agent: Callable[..., Agent],
) -> None:
    fake = agent({"initialize": caps(promptCapabilities={"image": True})})
    image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    events_of(fake.process.begin("look", extra=(image,)))
    (prompt,) = fake.received("session/prompt")
    assert prompt["params"]["prompt"] == [{"type": "text", "text": "look"}, image]


def test_an_agent_that_takes_no_pictures_is_not_sent_any(agent: Callable[..., Agent]) -> None:
    fake = agent({})
    image = {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}
    with pytest.raises(AgentCannotStart, match="does not take pictures"):
        fake.process.begin("look", extra=(image,))
    assert not fake.received("session/prompt")


@pytest.mark.parametrize("offers_fork", [True, False], ids=["fork", "no-fork"])
def test_a_completed_turn_leaves_a_copy_of_its_session_where_the_agent_can_fork(
    agent: Callable[..., Agent], offers_fork: bool
) -> None:
    """The copy is the turn's point for a later fork or undo at it (the session moves on)."""
    capabilities: dict[str, Any] = {"sessionCapabilities": {"fork": {}}} if offers_fork else {}
    fake = agent(
        {
            "initialize": caps(**capabilities),
            "session/prompt": {"steps": [chunk("hi")]},
            "session/fork": {"result": {"sessionId": "copy-1"}},
        }
    )
    end = end_of(events_of(fake.process.begin("hello")))
    assert end.stop_reason == "end_turn"
    forks = fake.received("session/fork")
    if offers_fork:
        assert end.branch == "copy-1"
        assert [m["params"]["sessionId"] for m in forks] == [end.session_id]
    else:
        assert end.branch is None and forks == []


# -- the session's mode, model and effort ----------------------------------------------------

ADAPTER_SESSION = {
    "result": {
        "sessionId": "s-1",
        "configOptions": [
            {"id": "mode", "category": "mode", "currentValue": "auto",
             "options": [{"value": "default"}, {"value": "auto"}]},
            {"id": "model", "category": "model", "currentValue": "big",
             "options": [{"value": "big"}, {"value": "small"}]},
        ],
    }
}  # fmt: skip


def test_the_policy_and_model_are_set_before_the_prompt(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/new": ADAPTER_SESSION})
    events = events_of(fake.process.begin("hi", turn=1, model="small"))
    sent = [m for m in fake.received() if "id" in m and "method" in m]
    methods = [m["method"] for m in sent]
    assert methods[-4:] == [
        "session/new",
        "session/set_config_option",
        "session/set_config_option",
        "session/prompt",
    ]
    assert [m["params"] for m in sent[-3:-1]] == [
        {"sessionId": "s-1", "configId": "mode", "value": "default"},
        {"sessionId": "s-1", "configId": "model", "value": "small"},
    ]
    assert events[0] == SessionStarted("s-1", "small")


def test_a_model_the_agent_does_not_offer_sends_no_prompt(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/new": ADAPTER_SESSION})
    with pytest.raises(AgentCannotStart, match="fake has no model 'huge'; it offers: big, small"):
        fake.process.begin("hi", turn=1, model="huge")
    assert not fake.received("session/prompt")
    assert not fake.received("session/set_config_option")


def test_an_agent_with_no_asking_mode_is_named_in_the_first_footer(
    agent: Callable[..., Agent],
) -> None:
    fake = agent({"session/new": {"result": {"sessionId": "s-1"}}})
    first = fake.process.begin("hi", turn=1)
    events = events_of(first)
    first.close(1.0)
    assert isinstance(events[0], SessionStarted) and events[0].note is not None
    assert "fake offers no modes" in events[0].note
    later = events_of(fake.process.begin("again", session_id="s-1", turn=2))
    assert later[0] == SessionStarted("s-1")  # said once, at the start


@pytest.mark.parametrize("bad", ["../../etc/passwd", "--yolo", "a b"])
def test_a_session_id_that_is_a_path_or_a_flag_is_refused(
    agent: Callable[..., Agent], bad: str
) -> None:
    fake = agent({"session/new": {"result": {"sessionId": bad}}})
    with pytest.raises(AgentCannotStart, match="without a usable session id"):
        fake.process.begin("hi", turn=1)
    assert not fake.received("session/prompt")


def test_opencodes_session_ids_are_taken(agent: Callable[..., Agent]) -> None:
    fake = agent({"session/new": {"result": {"sessionId": "ses_decedd9ffffeGJPDRWj12ytT5U"}}})
    end = end_of(events_of(fake.process.begin("hi", turn=1)))
    assert end.session_id == "ses_decedd9ffffeGJPDRWj12ytT5U"


def test_a_deny_reason_opens_the_next_prompt_in_the_session(agent: Callable[..., Agent]) -> None:
    asking = {
        "steps": [
            {
                "permission": {
                    "toolCall": {"toolCallId": "t1", "title": "Write a.txt"},
                    "options": [{"optionId": "no", "name": "Reject", "kind": "reject_once"}],
                }
            }
        ],
        "result": {"stopReason": "end_turn"},
    }
    fake = agent({"session/prompt": [asking, {"result": {"stopReason": "end_turn"}}]})
    first = fake.process.begin("write it", turn=1)
    asked = next_of(first, PermissionAsked)
    assert first.answer(asked.request_id, "no", "Not that file, use b.txt")
    events_of(first)
    first.close(1.0)
    # agentdoc keeps the reason with the document's state; the next request carries it.
    said = ("Not that file, use b.txt",)
    events_of(fake.process.begin("go on", session_id="sess-1", turn=2, said_before=said))
    prompts = [m["params"]["prompt"][0]["text"] for m in fake.received("session/prompt")]
    assert prompts[0] == "write it"
    assert prompts[1].startswith("(What I said when answering your tool requests:\n")
    assert "- Not that file, use b.txt" in prompts[1] and prompts[1].endswith("\n\ngo on")


def test_a_new_session_gets_no_reason_about_calls_it_never_saw(
    agent: Callable[..., Agent],
) -> None:
    fake = agent({})
    events_of(fake.process.begin("hello", turn=1, said_before=("Not that file",)))
    (prompt,) = fake.received("session/prompt")
    assert prompt["params"]["prompt"][0]["text"] == "hello"


def test_a_replay_sent_after_the_load_answer_stays_out_of_the_turn(
    agent: Callable[..., Agent],
) -> None:
    """Gemini CLI answers session/load first and replays the history after it."""
    init = caps(loadSession=True)
    init["result"]["agentInfo"] = {"name": "gemini-cli", "version": "0.61.0"}
    modes = {"currentModeId": "default", "availableModes": [{"id": "default"}]}
    fake = agent(
        {
            "initialize": init,
            "session/load": {"result": {"modes": modes}, "after": REPLAY},
            "session/prompt": {"steps": [chunk("new reply")], "result": {"stopReason": "end_turn"}},
        }
    )
    events = events_of(fake.process.begin("again", session_id="old-1", turn=2))
    assert text_of(events) == "new reply"
    assert [m["method"] for m in fake.received() if "method" in m and "id" in m][-2:] == [
        "session/set_mode",
        "session/prompt",
    ]
