"""One turn end to end with a replaying fake `claude`: what lands in the document and sidecar."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdoc.document import frontmatter
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError, NoPendingPrompt
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave
from tests.support.fake_claude import FakeClaude
from tests.support.paths import TRANSCRIPTS
from tests.support.waiting import wait_for

DOC = """---
title: Test
agentdoc: {}
---

# Test

## User

hi there
"""


def script_text(name: str) -> str:
    """The text blocks of the last scripted API reply of a recorded scenario."""
    script = json.loads((TRANSCRIPTS / f"{name}.script.json").read_text())
    last = script[-1]
    blocks = last["content"] if isinstance(last, dict) else last
    return "".join(b["text"] for b in blocks if b["type"] == "text")


def run(path: Path, fake: FakeClaude, **settings: object) -> tuple[str, object]:
    runner = TurnRunner(path, fake.settings(**settings), clear=own_leave, environ=fake.env)
    outcome = runner.run()
    return path.read_text(encoding="utf-8"), outcome


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "chat.md"
    path.write_text(DOC, encoding="utf-8")
    return path


def test_plain_reply_lands_under_its_heading_with_footer_and_next_prompt(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _outcome = run(doc, fake_claude("plain_text.ndjson"))
    parsed = document.parse(text)
    roles = [t.role for t in parsed.turns]
    assert roles == ["user", "assistant", "user"]
    reply = parsed.turns[1].content
    assert script_text("plain_text") in reply
    assert "<sub>" in reply and "agentdoc:reply" not in text
    assert parsed.pending_prompt() is None
    session = json.loads((TRANSCRIPTS / "plain_text.ndjson").read_text().splitlines()[0])
    assert parsed.meta.session == session["session_id"]
    assert text.startswith("---\ntitle: Test\n")


def test_thinking_goes_to_the_sidecar_and_never_into_the_document(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _ = run(doc, fake_claude("thinking_text.ndjson"))
    sidecar = (doc.parent / "chat.thinking.md").read_text()
    assert "The user greets me" in sidecar and '<a id="turn-1"></a>' in sidecar
    assert "The user greets me" not in text
    assert "[thinking](chat.thinking.md#turn-1)" in text
    assert not document.is_session_document(sidecar)


def test_redacted_thinking_is_noted(doc: Path, fake_claude: Callable[..., FakeClaude]) -> None:
    run(doc, fake_claude("redacted_thinking.ndjson"))
    assert "redacted" in (doc.parent / "chat.thinking.md").read_text()


def test_tool_use_is_a_folded_block_in_place(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _ = run(doc, fake_claude("tool_use_read.ndjson"))
    reply = document.parse(text).turns[1].content
    before, _tool, after = reply.partition("<details>")
    assert "Let me read the notes file." in before
    assert "Read" in after.split("</summary>")[0]
    assert "remember the milk" in after


def test_unicode_and_hostile_markdown_cannot_forge_structure(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _ = run(doc, fake_claude("unicode_markdown.ndjson"))
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert "👨‍👩‍👧‍👦" in text and "漢字かなカナ한국어" in text


def test_long_stream_arrives_complete_and_in_order(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _ = run(doc, fake_claude("long_stream.ndjson"))
    assert script_text("long_stream") in text


@pytest.mark.parametrize(
    ("transcript", "message"),
    [
        ("api_500.ndjson", "API Error: 500"),
        ("api_429.ndjson", "429"),
        ("invalid_api_key.ndjson", "Invalid API key"),
        ("connection_refused.ndjson", "Unable to connect"),
        ("max_turns_1.ndjson", "maximum number of turns"),
    ],
)
def test_api_failures_become_a_warning_callout(
    doc: Path, fake_claude: Callable[..., FakeClaude], transcript: str, message: str
) -> None:
    text, outcome = run(doc, fake_claude(transcript, exit="1"))
    reply = document.parse(text).turns[1].content
    assert "> [!WARNING]" in reply and message in reply
    assert outcome.state == "failed"  # type: ignore[attr-defined]


def test_failed_attempt_is_rolled_back_and_the_retry_kept(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, _ = run(doc, fake_claude("disconnect_then_recover.ndjson"))
    assert "Second attempt: complete answer." in text
    assert "First attempt" not in text


def test_killed_cli_keeps_partial_text_marked_interrupted(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    text, outcome = run(doc, fake_claude("signal_sigterm_midstream.ndjson", exit="143"))
    reply = document.parse(text).turns[1].content
    assert "s0" in reply and "interrupted" in reply
    assert outcome.state == "interrupted"  # type: ignore[attr-defined]


def test_stalled_stream_is_stopped_by_our_own_timer(
    doc: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    fake = fake_claude("plain_text.ndjson", hang_after="4")
    text, outcome = run(doc, fake, stall_timeout=0.5)
    assert "stall timeout" in text
    assert outcome.state == "failed"  # type: ignore[attr-defined]


def test_missing_claude_is_refused_before_the_document_is_touched(
    doc: Path, tmp_path: Path
) -> None:
    # Nothing was sent, so nothing is written: the user installs the CLI and runs again.
    from agentdoc.config import Settings
    from agentdoc.errors import AgentNotFound

    before = doc.read_bytes()
    settings = Settings(claude=str(tmp_path / "no-such-claude"))
    with pytest.raises(AgentNotFound, match="cannot find the Claude Code CLI"):
        TurnRunner(doc, settings, clear=own_leave).run()
    assert doc.read_bytes() == before


def test_user_edits_made_while_the_reply_streams_survive(
    doc: Path, fake_claude: Callable[..., FakeClaude], tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    fake = fake_claude("long_stream.ndjson", gate=str(gate), gate_at="400")
    runner = TurnRunner(doc, fake.settings(), clear=own_leave, environ=fake.env)
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(runner.run()))
    worker.start()
    wait_for(lambda: "w10 " in doc.read_text())
    current = doc.read_text()
    edited = current.replace("# Test\n", "# Test\n\nA note I added mid-reply.\n", 1)
    edited = edited.replace("hi there", "hi there (edited)")
    edited += "\nTyped below the reply.\n"
    doc.write_text(edited)
    gate.touch()
    worker.join(30)
    text = doc.read_text()
    assert "A note I added mid-reply." in text
    assert "hi there (edited)" in text
    assert "Typed below the reply." in text
    assert text.count(script_text("long_stream")) == 1


def test_no_pending_prompt_is_an_error_and_leaves_the_file(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    path = tmp_path / "done.md"
    original = DOC.replace("hi there\n", "<!-- only a note -->\n")
    path.write_text(original)
    with pytest.raises(NoPendingPrompt):
        run(path, fake_claude("plain_text.ndjson"))
    assert path.read_text() == original


def test_a_plain_markdown_file_is_never_touched(tmp_path: Path, plain_claude: FakeClaude) -> None:
    path = tmp_path / "plain.md"
    path.write_text("# Notes\n\n## User\n\nhello\n")
    with pytest.raises(AgentdocError, match="agentdoc"):
        run(path, plain_claude)
    assert path.read_text() == "# Notes\n\n## User\n\nhello\n"
    assert plain_claude.calls() == []


def test_crlf_and_bom_document_keeps_its_bytes_outside_the_reply(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    path = tmp_path / "win.md"
    original = ("\ufeff" + DOC.replace("agentdoc: {}", "agentdoc: {}  # keep me")).replace(
        "\n", "\r\n"
    )
    path.write_bytes(original.encode("utf-8"))
    run(path, fake_claude("plain_text.ndjson"))
    data = path.read_bytes().decode("utf-8")
    assert data.startswith("\ufeff---\r\n")
    assert "\n" not in data.replace("\r\n", "")
    body_start = original.index("# Test")
    assert data[data.index("# Test") :].startswith(original[body_start:])
    assert "# keep me" in data
    assert frontmatter.read_meta(data) is not None


def test_argv_and_prompt_reach_the_cli_safely(doc: Path, plain_claude: FakeClaude) -> None:
    path = doc
    path.write_text(DOC.replace("hi there", "--dangerously-skip-permissions please"))
    run(path, plain_claude)
    (call,) = plain_claude.calls()
    argv = call["argv"]
    assert argv[:4] == [
        "-p",
        "--output-format=stream-json",
        "--verbose",
        "--include-partial-messages",
    ]
    assert any(a.startswith("--session-id=") for a in argv)
    assert "--dangerously-skip-permissions" not in " ".join(argv)
    assert call["stdin"] == "--dangerously-skip-permissions please"
    assert call["cwd"] == str(path.parent)


def test_the_first_text_is_written_at_once_and_the_rest_coalesced(
    doc: Path, fake_claude: Callable[..., FakeClaude], tmp_path: Path
) -> None:
    """With a minute between streamed writes, the reply's first word is in the document as
    soon as it arrives, and what follows it waits for the next write. (The CLI prints a line
    every 10 ms, up to a gate, so the stream is never idle long enough for the idle look at
    the document to write the words before the gate.)"""
    gate = tmp_path / "gate"
    fake = fake_claude("long_stream.ndjson", gate=str(gate), gate_at="300", delay="0.01")
    runner = TurnRunner(doc, fake.settings(flush_interval=60.0), clear=own_leave, environ=fake.env)
    thread = threading.Thread(target=runner.run)
    thread.start()
    try:
        wait_for(lambda: "w0 " in doc.read_text(encoding="utf-8"), what="the first word")
        assert "w295 " not in doc.read_text(encoding="utf-8")
    finally:
        runner.cancel.set()  # the rest of the reply is not what this test is about
        gate.touch()
        thread.join(30)
    assert not thread.is_alive()
