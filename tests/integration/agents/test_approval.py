"""The approval block (pure), the answers a turn accepts, and the warm pool's reuse rule."""

from __future__ import annotations

import json
import threading
from functools import partial
from pathlib import Path, PurePath
from typing import Any

import pytest

from agentdoc.agents import AgentRequest, PermissionAsked
from agentdoc.agents.claude.events import PermissionRequest, PermissionWithdrawn
from agentdoc.agents.claude.launch import WarmClaude, shape
from agentdoc.agents.claude.process import protect_rules
from agentdoc.agents.claude.stream import parse_line
from agentdoc.agents.claude.turn import asked, response
from agentdoc.agents.claude.warm import route
from agentdoc.daemon.pool import reusable
from agentdoc.document import WriteLedger, write_text
from agentdoc.document.approval import (
    Answer,
    find_block,
    read_answer,
    render_approval,
    render_decision,
    replace_block,
    touches,
)
from agentdoc.document.merge import merge_text
from agentdoc.records import Status, write_status
from agentdoc.turn.approvals import (
    SELF_REFUSAL,
    Approvals,
    answer_path,
    option_for,
    request_answer,
    take_answer,
)
from tests.support.clearance import leave_for
from tests.support.waiting import wait_for

NONCE = "0123456789abcdef"
WRITE = {"file_path": "/w/notes/out.txt", "content": "hello\n"}


def block(**ticks: str) -> str:
    """The pending block with boxes ticked: ticks maps a label to the text that replaces it."""
    text = render_approval("Write", WRITE, NONCE)
    for label, new in ticks.items():
        text = text.replace(f"> - [ ] {label}\n", new, 1)
    return text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(block(), None, id="nothing-ticked"),
        pytest.param(block(allow="> - [x] allow\n"), Answer("allow"), id="allow"),
        pytest.param(block(allow="> - [X] allow\n"), Answer("allow"), id="capital-x"),
        pytest.param(block(allow="> - [ x] allow\n"), Answer("allow"), id="x-after-the-space"),
        pytest.param(block(allow="> - [x ] allow\n"), Answer("allow"), id="x-before-the-space"),
        pytest.param(block(allow="> - [xx] allow\n"), None, id="not-a-box"),
        pytest.param(block(allow="- [x] allow\n"), Answer("allow"), id="quote-marker-removed"),
        pytest.param(
            block(
                **{
                    "allow Write for the rest of this session": "> - [x] allow Write for the "
                    "rest of this session\n"
                }
            ),
            Answer("always"),
            id="always",
        ),
        pytest.param(block(deny="> - [x] deny\n"), Answer("deny"), id="deny"),
        pytest.param(
            block(deny="> - [x] deny\n> Not there.\n> Use /tmp instead.\n"),
            Answer("deny", "Not there.\nUse /tmp instead."),
            id="deny-with-reason",
        ),
        pytest.param(
            block(allow="> - [x] allow\n", deny="> - [x] deny\n"), Answer("deny"), id="deny-wins"
        ),
        pytest.param(
            block().replace(NONCE, "ffffffffffffffff"), None, id="another-nonce-is-not-ours"
        ),
        pytest.param("> - [x] allow\n" + block(), None, id="a-tick-outside-the-markers-is-text"),
    ],
)
def test_read_answer(text: str, expected: Answer | None) -> None:
    assert read_answer(f"before\n\n{text}\n\nafter\n", NONCE) == expected


def test_a_tick_merged_into_a_streamed_write_still_answers() -> None:
    """The person ticks while the reply streams, between the daemon's read of the document and
    its write: the write merges the tick in as typed text, and the answer must still count."""
    base = f"Some text.\n\n{block()}\n"
    ticked = base.replace("> - [ ] allow\n", "> - [x] allow\n", 1)
    merged = merge_text(base, base + "More text.\n", ticked)
    assert read_answer(merged, NONCE) == Answer("allow")


def test_the_block_shows_the_tool_its_target_and_folded_input() -> None:
    text = render_approval(
        "Write", {**WRITE, "content": "x" * 5000}, NONCE, ".agentdoc/in.json", agent="Claude"
    )
    assert (
        "> Claude wants to use **Write** on `/w/notes/out.txt` (tool input folded below)." in text
    )
    assert "> - [ ] allow\n> - [ ] allow Write for the rest of this session\n> - [ ] deny" in text
    assert "<details><summary>tool input</summary>" in text
    assert "(5000 characters in all)" in text and "x" * 1600 not in text
    assert "The whole input is in `.agentdoc/in.json`." in text
    assert find_block(text, NONCE) == (0, len(text))


def test_a_tool_name_cannot_inject_markup() -> None:
    text = render_approval("**x**<b>", {}, NONCE)
    assert "**x**<b>" not in text and "**xb**" in text


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer("allow"), "*🔐 **Write** on `/w/notes/out.txt` allowed in the document*"),
        (
            Answer("always", by="command"),
            "*🔐 **Write** on `/w/notes/out.txt` allowed for the rest of the session from the "
            "command line*",
        ),
        (
            Answer("deny", "Not *there*.\nSorry.", by="document"),
            "*🔐 **Write** on `/w/notes/out.txt` denied in the document: Not \\*there\\*. Sorry.*",
        ),
    ],
)
def test_render_decision(answer: Answer, expected: str) -> None:
    assert render_decision("Write", WRITE, answer) == expected


def test_replace_block_puts_back_only_the_block() -> None:
    answered = block(deny="> - [x] deny\n> no\n")
    text = f"mine\n{answered}\nalso mine\n"
    assert replace_block(text, NONCE, block()) == f"mine\n{block()}\nalso mine\n"
    assert replace_block("no block here", NONCE, "x") is None


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"file_path": "/w/chat.md"}, True),
        ({"command": "sed -i s/a/b/ chat.md"}, True),
        ({"command": "cat > .agentdoc/chat.md.answer.json"}, True),
        ({"file_path": "/w/chat.thinking.md"}, True),
        ({"edits": [{"file_path": "/w/chat.md"}]}, True),
        # codex-acp's apply_patch names its files only as keys: {path: {"type": "add", …}}
        ({"changes": {"/w/.agentdoc/x.json": {"type": "add", "content": "{}"}}}, True),
        ({"changes": {"/w/notes/out.txt": {"type": "add", "content": "chat"}}}, False),
        ({"file_path": "/w/notes/out.txt"}, False),
        ({"command": "ls -la"}, False),
    ],
)
def test_touches_protected_files(tool_input: dict[str, Any], expected: bool) -> None:
    protected = [PurePath("/w/chat.md"), PurePath("/w/chat.thinking.md"), PurePath("/w/.agentdoc")]
    assert touches(tool_input, protected) is expected


def test_protect_rules_are_absolute_edit_rules(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    rules = protect_rules([doc, tmp_path / ".agentdoc"])
    assert rules == (
        f"Edit(/{doc})",
        f"Edit(/{tmp_path}/.agentdoc)",
        f"Edit(/{tmp_path}/.agentdoc/**)",
    )


# --- the answers a turn accepts -------------------------------------------------------------


def claude_request(
    tool: str = "Write", tool_input: dict[str, Any] | None = None
) -> PermissionRequest:
    return PermissionRequest(
        request_id="req-1", tool_name=tool, input=tool_input or WRITE, tool_use_id="toolu_1"
    )


def request(tool: str = "Write", tool_input: dict[str, Any] | None = None) -> PermissionAsked:
    return asked(claude_request(tool, tool_input))


def claude_response(answer: Answer) -> dict[str, Any]:
    """What the CLI is sent for `answer`: the option the turn picks, as the Claude turn says it."""
    option = option_for(request(), answer)
    assert option is not None
    return response(claude_request(), option, answer.message or None)


def test_only_a_save_of_the_person_answers(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text("x\n")
    ledger = WriteLedger()
    approvals = Approvals(doc, ledger, timeout=60)
    assert approvals.ask(request()) is False
    shown = approvals.shown["toolu_1"]
    nonce = shown.split()[2]
    ticked = shown.replace("> - [ ] allow\n", "> - [x] allow\n", 1)
    write_text(doc, f"{ticked}\n", ledger)  # our own write (as a tool's would look): no answer
    assert approvals.poll(now=0) == [] and approvals.waiting == "Write"
    doc.write_text(f"{ticked}\nmy note\n")  # the person's save
    [(item, answer)] = approvals.poll(now=0)
    assert item.nonce == nonce and answer == Answer("allow")
    assert approvals.waiting is None and "allowed in the document" in approvals.shown["toolu_1"]


def test_a_request_on_the_document_itself_is_refused_without_asking(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    approvals = Approvals(doc, WriteLedger(), timeout=60)
    assert approvals.ask(request("Bash", {"command": f"echo '- [x] allow' >> {doc.name}"}))
    assert SELF_REFUSAL in approvals.shown["toolu_1"]
    assert approvals.waiting is None and "agentdoc refused" in approvals.shown["toolu_1"]


def test_an_answer_file_from_before_the_request_does_not_answer_it(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text("x\n")
    stale = answer_path(doc)
    stale.parent.mkdir()
    stale.write_text(json.dumps({"behavior": "allow"}))
    approvals = Approvals(doc, WriteLedger(), timeout=60)
    approvals.ask(request())
    assert approvals.poll(now=0) == []


def test_an_unanswered_request_is_denied_after_the_timeout(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text("x\n")
    approvals = Approvals(doc, WriteLedger(), timeout=5)
    approvals.ask(request())
    [(_, answer)] = approvals.poll(now=float("inf"))
    assert answer.behavior == "deny" and "no answer within" in answer.message


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (Answer("allow"), {"behavior": "allow", "updatedInput": WRITE}),
        (Answer("deny", "no"), {"behavior": "deny", "message": "no"}),
        (Answer("deny"), {"behavior": "deny", "message": "The user denied this."}),
    ],
)
def test_response(answer: Answer, expected: dict[str, Any]) -> None:
    assert claude_response(answer) == expected


def test_always_adds_a_session_rule_for_the_tool() -> None:
    sent = claude_response(Answer("always"))
    assert sent["updatedPermissions"][0]["rules"] == [{"toolName": "Write"}]
    assert sent["updatedPermissions"][0]["destination"] == "session"


# --- the wire --------------------------------------------------------------------------------


def test_permission_requests_and_withdrawals_are_parsed() -> None:
    line = json.dumps(
        {
            "type": "control_request",
            "request_id": "r1",
            "request": {
                "subtype": "can_use_tool",
                "tool_name": "Bash",
                "input": {"command": "ls"},
                "tool_use_id": "toolu_9",
            },
        }
    )
    event = parse_line(line)
    assert isinstance(event, PermissionRequest)
    assert (event.request_id, event.tool_name, event.tool_use_id) == ("r1", "Bash", "toolu_9")
    cancel = parse_line('{"type":"control_cancel_request","request_id":"r1"}')
    assert isinstance(cancel, PermissionWithdrawn) and cancel.request_id == "r1"
    other = '{"type":"control_request","request_id":"r2","request":{"subtype":"hook_callback"}}'
    assert parse_line(other) is None


# Real result lines are long, and Claude Code 2.1.330 puts `type` last in an error result.
_PADDING = b",".join(b'"k%d":0' % i for i in range(40))


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'{"type":"result","subtype":"success"}\n', "result"),
        (b'{"type": "result", "subtype": "success"}\n', "result"),
        (b'{"type":"control_response","response":{}}\n', "control_response"),
        (b'{"type":"assistant","message":{"content":"{\\"type\\":\\"result\\"}"}}\n', ""),
        (b'{"type":"stream_event"}\n', ""),
        # Claude Code 2.1.330 puts `type` last in an error result.
        (
            b'{"duration_ms":0,"usage":{' + _PADDING + b'},"is_error":true,"type":"result"}\n',
            "result",
        ),
        (
            b'{"request_id":"r1","response":{' + _PADDING + b'},"type":"control_response"}\n',
            "control_response",
        ),
        # A nested object of that type is not the line's own type.
        (b'{"type":"assistant","message":{"content":[{"type":"result"}]}}\n', ""),
        (b'{"usage":{' + _PADDING + b'},"x":{"type":"result"},"type":"stream_event"}\n', ""),
    ],
)
def test_a_line_is_routed_by_its_own_type(line: bytes, kind: str) -> None:
    found, value = route(line)
    assert found == kind and value == json.loads(line)


# --- the warm pool's reuse rule ----------------------------------------------------------------


class _Proc:
    def __init__(self, key: object, session: str | None, *, busy: bool = False, alive: bool = True):
        self.key, self.session_id, self.busy, self._alive = key, session, busy, alive
        self.last_turn = 1

    def alive(self) -> bool:
        return self._alive


KEY = ("claude", "-p")


@pytest.mark.parametrize(
    ("proc", "req", "expected"),
    [
        (
            _Proc(KEY, "s1"),
            AgentRequest("p", Path("."), resume="s1", turn=2, clearance=leave_for(Path("."))),
            True,
        ),
        # turn 2 ran elsewhere (`agentdoc run`): this process never saw it
        (
            _Proc(KEY, "s1"),
            AgentRequest("p", Path("."), resume="s1", turn=3, clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(KEY, "s1"),
            AgentRequest("p", Path("."), resume="s2", turn=2, clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(KEY, "s1"),
            AgentRequest("p", Path("."), session_id="new", clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(KEY, "s1"),
            AgentRequest("p", Path("."), resume="s1", fork=True, clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(("other",), "s1"),
            AgentRequest("p", Path("."), resume="s1", clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(KEY, "s1", busy=True),
            AgentRequest("p", Path("."), resume="s1", clearance=leave_for(Path("."))),
            False,
        ),
        (
            _Proc(KEY, "s1", alive=False),
            AgentRequest("p", Path("."), resume="s1", clearance=leave_for(Path("."))),
            False,
        ),
        (_Proc(KEY, None), AgentRequest("p", Path("."), clearance=leave_for(Path("."))), False),
    ],
)
def test_reusable(proc: _Proc, req: AgentRequest, expected: bool) -> None:
    assert reusable(WarmClaude(proc), KEY, req) is expected  # type: ignore[arg-type]


def test_shape_drops_only_the_session_flags() -> None:
    argv = ["claude", "-p", "--resume=s1", "--fork-session", "--session-id=x", "--model=opus"]
    assert shape(argv) == ("claude", "-p", "--model=opus")


def test_an_answer_by_command_is_never_taken_half_written(tmp_path: Path) -> None:
    """`agentdoc deny` writes while the turn polls and takes (deletes) what it finds: a file
    caught between its creation and its content would lose the answer and leave the turn
    waiting."""
    doc = tmp_path / "chat.md"
    doc.write_text("## User\n\nhi\n")
    write_status(doc, Status(document=doc.name, state="waiting", updated=""))
    taken: list[Answer] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            found = take_answer(doc)
            if found is not None:
                taken.append(found)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        for n in range(300):
            request_answer(doc, "deny", f"no {n}")
            wait_for(partial(_more_than, taken, n), what=f"answer {n} taken", timeout=10)
    finally:
        done.set()
        poller.join()
    assert [a.message for a in taken] == [f"no {n}" for n in range(300)]


def _more_than(taken: list[Answer], n: int) -> bool:
    return len(taken) > n
