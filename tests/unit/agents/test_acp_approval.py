"""The approval block of an ACP agent: one box per option it offers, read back by position."""

from __future__ import annotations

import pytest

from agentdoc.agents import PermissionAsked
from agentdoc.agents.base.events import PermissionOption
from agentdoc.document.approval import Answer, read_answer, render_approval
from agentdoc.turn.approvals import option_for

OPTIONS = [
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Allow for this session", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]

NONCE = "0123456789abcdef"
KINDS = [o["kind"] for o in OPTIONS]
NAMES = [o["name"] for o in OPTIONS]


def block(*ticked: int, reason: str = "") -> str:
    text = render_approval(
        "Write notes.txt", {"path": "notes.txt"}, NONCE, options=NAMES, agent="gemini"
    )
    for index in ticked:
        text = text.replace(f"> - [ ] {NAMES[index]}", f"> - [x] {NAMES[index]}")
    if reason:
        text = text.replace(f"> - [x] {NAMES[2]}", f"> - [x] {NAMES[2]}\n> {reason}")
    return text


def test_the_block_has_one_box_per_option_and_names_the_agent() -> None:
    text = block()
    assert "gemini wants to use **Write notes.txt** on `notes.txt`" in text
    assert [line for line in text.splitlines() if "- [ ]" in line] == [
        f"> - [ ] {n}" for n in NAMES
    ]


@pytest.mark.parametrize(
    ("ticked", "reason", "expected"),
    [
        ((), "", None),
        ((0,), "", Answer("allow", option=0)),
        ((1,), "", Answer("always", option=1)),
        ((2,), "not there", Answer("deny", "not there", option=2)),
        ((0, 2), "", Answer("deny", option=2)),  # a reject among the ticks wins
    ],
)
def test_the_ticked_option_is_read_back(
    ticked: tuple[int, ...], reason: str, expected: Answer | None
) -> None:
    assert read_answer(block(*ticked, reason=reason), NONCE, KINDS) == expected


def asked() -> PermissionAsked:
    options = tuple(PermissionOption(o["optionId"], o["name"], o["kind"]) for o in OPTIONS)  # type: ignore[arg-type]
    return PermissionAsked("acp-1", "Write notes.txt", {}, options=options)


@pytest.mark.parametrize(
    ("answer", "option"),
    [
        (Answer("allow", by="command"), "once"),
        (Answer("always", by="command"), "always"),
        (Answer("deny", by="command"), "reject"),
    ],
)
def test_approve_and_deny_pick_the_option_of_their_kind(answer: Answer, option: str) -> None:
    assert option_for(asked(), answer) == option
