"""Every failure the daemon meets is told where the person looks: the status file, `agentdoc
status`, the document when a prompt waited, and the terminal's live view (without logger names).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.document import parser as document
from agentdoc.records import status
from agentdoc.turn import Progress
from tests.support.clearance import own_leave
from tests.support.daemon import DOC, Running, make_daemon, roles, save_and_wait_streaming
from tests.support.documents import chat_in
from tests.support.fake_claude import FakeClaude
from tests.support.paths import TRANSCRIPTS
from tests.support.waiting import wait_for

ANSWERED = DOC + "asked\n\n## Assistant\n\nanswered\n\n## User\n\n"


def _status(path: Path) -> status.Status:
    current = status.read_status(path)
    assert current is not None
    return current


def _status_lines(folder: Path) -> str:
    result = CliRunner().invoke(cli, ["status", str(folder)])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_prompt_held_at_start_up_says_why_in_the_status(
    plain_claude: FakeClaude, folder: Path
) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC + "waiting since yesterday\n")
    with Running(make_daemon(folder, plain_claude), discovered=True):
        wait_for(lambda: status.status_path(doc).exists(), what="the status")
        held = _status(doc)
        assert held.state == "pending" and "already there when agentdoc watch started" in (
            held.held or ""
        )
        assert "chat.md: pending — the prompt was already there" in _status_lines(folder)
        doc.write_text(doc.read_text() + "\n")  # a save sends it, and the reason goes
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: _status(doc).state == "idle", what="idle")
    assert _status(doc).held is None


def test_a_prompt_held_by_the_bulk_rule_says_why_in_the_status(
    folder: Path, plain_claude: FakeClaude
) -> None:
    doc = folder / "chat.md"
    doc.write_text(ANSWERED)
    with Running(make_daemon(folder, plain_claude), discovered=True):
        # A second prompt below an unanswered one: not what typing a prompt looks like.
        doc.write_text(ANSWERED + "one\n\n## Assistant\n\nx\n\n## User\n\ntwo\n")
        wait_for(lambda: status.status_path(doc).exists(), what="the status")
        held = _status(doc)
    assert held.state == "pending" and "changed in bulk" in (held.held or "")
    assert plain_claude.calls() == []


def test_broken_frontmatter_saved_under_the_daemon_is_told(
    fake_claude: Callable[..., FakeClaude], folder: Path
) -> None:
    doc = folder / "chat.md"
    doc.write_text(ANSWERED)
    seen: list[Progress] = []
    daemon = make_daemon(folder, fake_claude("plain_text.ndjson"), on_progress=seen.append)
    with Running(daemon, discovered=True):
        broken = ANSWERED.replace("agentdoc: {}", "title: [oops\nagentdoc: {}") + "hello?\n"
        doc.write_text(broken)
        wait_for(lambda: status.status_path(doc).exists(), what="the status")
        told = _status(doc)
        assert told.state == "error" and "frontmatter" in (told.error or "").lower()
        wait_for(lambda: any(p.state == "failed" and p.path == doc for p in seen), what="live")
        assert "chat.md: error" in _status_lines(folder)
        assert doc.read_text() == broken  # a refused document is not written
        doc.write_text(ANSWERED + "hello?\n")  # fixed: the prompt is sent
        wait_for(lambda: roles(doc) == ["user", "assistant"] * 2 + ["user"], what="the reply")
        wait_for(lambda: _status(doc).state == "idle", what="idle")


def test_the_daemon_without_claude_says_so_at_start_and_in_the_document(
    tmp_path: Path, folder: Path, doc: Path
) -> None:
    env = {**os.environ, "AGENTDOC_CLAUDE": str(tmp_path / "nowhere" / "claude")}
    env.pop("PYTHONWARNINGS", None)
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as sink:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "agentdoc", "watch", str(folder)],
            stderr=sink,
            stdout=subprocess.DEVNULL,
            env=env,
        )
    try:
        wait_for(lambda: "cannot find the Claude Code CLI" in errors.read_text(), what="start")
        wait_for(lambda: "start-up" not in errors.read_text() and _watching(folder), what="lock")
        doc.write_text(DOC + "are you there?\n")
        wait_for(lambda: "The reply failed" in doc.read_text(), what="the failure notice")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(20)
    text = doc.read_text()
    assert "cannot find the Claude Code CLI" in text
    # The failure notice keeps the prompt pending, as for any failed turn.
    assert document.parse(text).unanswered() is not None
    assert _status(doc).state == "error"
    shown = errors.read_text()
    assert "agentdoc.daemon" not in shown and "agentdoc.turn" not in shown, shown


def _watching(folder: Path) -> bool:
    return (folder / ".agentdoc" / "daemon.lock").exists()


def test_status_leaves_out_deleted_documents_and_says_a_dead_turn_is_over(folder: Path) -> None:
    gone, alive = folder / "gone.md", folder / "alive.md"
    alive.write_text(ANSWERED)
    dead = subprocess.Popen(["true"])
    dead.wait()
    for path in (gone, alive):
        status.write_status(
            path,
            status.Status(document=path.name, state="streaming", updated="x", turn=1, pid=dead.pid),
        )
    shown = _status_lines(folder)
    assert "gone.md" not in shown
    assert "alive.md: error" in shown and f"pid {dead.pid} is gone" in shown


def test_an_interrupted_turn_counts_the_text_it_kept(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    from agentdoc.turn.runner import TurnRunner

    # Claude Code's result for an interrupted turn says 0 output tokens (as recorded from the
    # real CLI), though the text it streamed before is kept in the document.
    recorded = (TRANSCRIPTS / "plain_text.ndjson").read_text().splitlines()
    interrupted = []
    for line in recorded:
        event = json.loads(line)
        if event.get("type") == "result":
            event.update(subtype="error_during_execution", is_error=True, result=None)
            event["usage"]["output_tokens"] = 0
        interrupted.append(json.dumps(event))
    transcript = tmp_path / "interrupted.ndjson"
    transcript.write_text("\n".join(interrupted) + "\n")
    fake = fake_claude(str(transcript))
    doc = tmp_path / "chat.md"
    doc.write_text(DOC + "hello\n")
    TurnRunner(doc, fake.settings(), clear=own_leave, environ=fake.env).run()
    assert "plain reply from the mock" in doc.read_text()
    counted = _status(doc)
    assert counted.tokens > 0 and counted.tokens_estimated


def test_a_document_deleted_mid_reply_ends_its_live_line_and_its_state(
    tmp_path: Path, gated_claude: FakeClaude
) -> None:
    from agentdoc.cli.terminal import FINAL_STATES

    doc = chat_in(tmp_path / "docs", DOC)
    folder = doc.parent
    gate = tmp_path / "gate"
    seen: list[Progress] = []
    daemon = make_daemon(folder, gated_claude, on_progress=seen.append)
    try:
        with Running(daemon, discovered=True):
            save_and_wait_streaming(doc, DOC + "soon gone\n")
            doc.unlink()
            wait_for(lambda: seen[-1].state in FINAL_STATES, what="the live line to end")
            wait_for(lambda: not (folder / ".agentdoc" / "chat.md.status.json").exists())
            assert "chat.md" not in _status_lines(folder)
    finally:
        gate.touch()


def test_a_prompt_saved_behind_a_streaming_reply_shows_as_queued(
    tmp_path: Path, folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    gate = tmp_path / "gate"
    try:
        with Running(make_daemon(folder, gated_claude), discovered=True):
            save_and_wait_streaming(doc, DOC + "first\n")
            doc.write_text(doc.read_text() + "\n## User\n\nsecond\n")
            wait_for(lambda: _status(doc).queued, what="queued in the status")
            assert _status(doc).state == "streaming"
            assert "queued: a prompt saved below it" in _status_lines(folder)
            gate.touch()
            wait_for(lambda: len(gated_claude.calls()) == 2, what="the queued prompt sent")
            wait_for(lambda: _status(doc).state == "idle", what="the second reply")
    finally:
        gate.touch()
    assert not _status(doc).queued


def test_the_start_up_check_follows_the_default_agent(tmp_path: Path) -> None:
    from agentdoc.config import Settings
    from agentdoc.daemon.notices import agent_problems

    nowhere = {"PATH": str(tmp_path)}
    [gemini] = agent_problems(Settings.model_validate({"agent": "gemini"}), nowhere)
    assert gemini.startswith("agent 'gemini': gemini not found")
    missing = str(tmp_path / "claude")
    [claude] = agent_problems(Settings.model_validate({"claude": missing}), nowhere)
    assert "cannot find the Claude Code CLI" in claude
    here = Settings.model_validate({"claude": sys.executable})
    assert agent_problems(here, nowhere) == []
