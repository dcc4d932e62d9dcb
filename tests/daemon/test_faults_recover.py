"""Every fault under `agentdoc watch` recovers by itself, without the person repairing anything.

Each test does what happened to a user: a disk that fills up and is freed, a real `chmod`, a
real `mv` of the folder, a real delete and re-create, through the real daemon and its watcher.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdoc.daemon.service import Daemon
from agentdoc.daemon.turns import Turns
from agentdoc.records import status
from agentdoc.records.recovery import open_regions
from tests.support.acp import FakeAgent, chunk
from tests.support.daemon import DOC, Running, make_daemon, roles, save_and_wait_streaming
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


def _closed(path: Path) -> bool:
    text = path.read_text()
    return not open_regions(text) and "The reply was interrupted" in text


def _state(path: Path) -> str | None:
    current = status.read_status(path)
    return current.state if current else None


def test_after_a_full_disk_the_reply_is_closed_and_the_next_prompt_sent(
    gate: Path, folder: Path, doc: Path, gated_claude: FakeClaude, disk_full: threading.Event
) -> None:
    daemon = make_daemon(folder, gated_claude, retry_interval=0.3)
    with Running(daemon, discovered=True):
        save_and_wait_streaming(doc, DOC + "first\n")
        disk_full.set()  # the disk fills up: neither the reply nor the status can be written
        gate.touch()
        wait_for(lambda: daemon.turns.running() == 0, what="the turn to fail")
        assert _state(doc) == "streaming"  # what the full disk left behind
        disk_full.clear()  # space freed: nobody saves, yet the reply is closed and the status told
        wait_for(lambda: _closed(doc), what="the open reply closed")
        wait_for(lambda: _state(doc) == "error", what="the status rewritten")
        doc.write_text(doc.read_text() + "second\n")  # the next prompt is sent
        wait_for(lambda: roles(doc) == ["user", "assistant"] * 2 + ["user"], what="2nd reply")
    assert not open_regions(doc.read_text())
    assert _state(doc) == "idle"


def test_a_document_made_writable_again_gets_its_reply_closed_at_once(
    gate: Path, folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    # No periodic retry in this test: the attribute change itself must bring the close.
    daemon = make_daemon(folder, gated_claude, retry_interval=3600)
    with Running(daemon, discovered=True):
        save_and_wait_streaming(doc, DOC + "first\n")
        subprocess.run(["chmod", "444", str(doc)], check=True)
        gate.touch()
        wait_for(lambda: daemon.repairs.owes(doc), what="the turn to fail, owing a close")
        assert open_regions(doc.read_text())
        subprocess.run(["chmod", "644", str(doc)], check=True)
        wait_for(lambda: _closed(doc), what="the reply closed after chmod 644")
        assert _state(doc) == "error"


def test_a_renamed_folder_does_not_keep_a_streaming_status(
    tmp_path: Path, gate: Path, gated_claude: FakeClaude
) -> None:
    root = tmp_path / "notes"
    (root / "fra").mkdir(parents=True)
    doc = root / "fra" / "chat.md"
    moved = root / "fra-renamed" / "chat.md"
    doc.write_text(DOC)
    daemon = make_daemon(root, gated_claude)
    with Running(daemon, discovered=True):
        save_and_wait_streaming(doc, DOC + "first\n")
        subprocess.run(["mv", str(root / "fra"), str(root / "fra-renamed")], check=True)
        wait_for(lambda: _closed(moved), what="the moved reply closed")
        wait_for(lambda: _state(moved) == "error", what="the moved status corrected")
        gate.touch()
        wait_for(lambda: daemon.turns.running() == 0, what="the old turn to end")
    current = status.read_status(moved)
    assert current is not None and current.pid is None and "interrupted" in (current.error or "")


def test_a_stale_status_found_at_start_up_is_corrected(
    plain_claude: FakeClaude, folder: Path
) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC + "asked\n\n## Assistant\n\nanswered\n\n## User\n\n")
    dead = subprocess.Popen(["true"])
    dead.wait()
    status.write_status(
        doc, status.Status(document=doc.name, state="streaming", updated="x", pid=dead.pid)
    )
    with Running(make_daemon(folder, plain_claude), discovered=True):
        wait_for(lambda: _state(doc) == "error", what="the stale status corrected")


@pytest.mark.parametrize("wait", [True, False], ids=["after-the-turn", "at-once"])
def test_a_deleted_then_recreated_document_is_a_new_document(
    gate: Path, wait: bool, folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    daemon = make_daemon(folder, gated_claude)
    with Running(daemon, discovered=True):
        save_and_wait_streaming(doc, DOC + "first\n")
        subprocess.run(["rm", str(doc)], check=True)
        if wait:
            wait_for(lambda: daemon.turns.running() == 0, what="the deleted document's turn to end")
        doc.write_text(DOC.replace("# Chat", "# Another chat") + "a new question\n")
        wait_for(lambda: len(gated_claude.calls()) == 2, what="the new prompt sent")
        gate.touch()
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the new reply")
    assert "a new question" in gated_claude.calls()[1]["stdin"]
    assert "first" not in doc.read_text()


@pytest.mark.parametrize("outcome", ["failed", "interrupted"])
def test_a_prompt_saved_as_a_failed_turn_ends_is_sent(
    folder: Path,
    doc: Path,
    fake_claude: Callable[..., FakeClaude],
    monkeypatch: pytest.MonkeyPatch,
    outcome: str,
) -> None:
    """The person resends the moment the failure shows: the save lands after the turn wrote its
    end and before the daemon took that end in. It is a save like any other, and sends."""
    transcript = {"failed": "api_400_invalid.ndjson", "interrupted": "truncated_stream.ndjson"}
    failing = fake_claude(transcript[outcome])
    real_on_done = Turns.on_done
    resent = threading.Event()

    def save_first(turns: Turns, path: Path, ended: str, failure: str | None) -> None:
        if not resent.is_set():
            resent.set()
            # Deleting the notice resends, as the notice itself says.
            text = path.read_text()
            path.write_text(text[: text.index("## Assistant")])
        real_on_done(turns, path, ended, failure)

    monkeypatch.setattr(Turns, "on_done", save_first)
    daemon = make_daemon(folder, failing)
    with Running(daemon, discovered=True):
        doc.write_text(DOC + "first\n")
        wait_for(lambda: len(failing.calls()) == 2, what="the resent prompt sent")
    assert "first" in failing.calls()[1]["stdin"]


def test_a_prompt_saved_as_a_partial_failed_turn_ends_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn failed mid-stream: its end keeps the partial text and leaves a new `## User`
    heading, and the person types the next prompt under it at once. That save landed while the
    turn wrote its end and was merged into that write, so the file and its event read as
    agentdoc's own, and the prompt was never sent (seen under load with the real OpenCode)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = folder / "chat.md"
    doc.write_text(DOC.replace("agentdoc: {}", "agentdoc: {agent: fake}"))
    broken = {"code": -32603, "message": "refused mid-stream"}
    agent = FakeAgent(tmp_path, {"session/prompt": {"steps": [chunk("Partial ")], "error": broken}})
    real_on_done = Turns.on_done
    typed = threading.Event()

    def merged_into_the_end(turns: Turns, path: Path, ended: str, failure: str | None) -> None:
        if not typed.is_set():
            typed.set()
            text = path.read_text() + "Try once more.\n"
            path.write_text(text)
            turns.loop.ledger.record(path, text.encode())  # as the end's own write merged it
        real_on_done(turns, path, ended, failure)

    monkeypatch.setattr(Turns, "on_done", merged_into_the_end)
    with Running(Daemon([folder], agent.settings(), rescan_interval=0.5), discovered=True):
        doc.write_text(doc.read_text() + "first\n")
        wait_for(lambda: len(agent.prompts()) == 2, what="the typed prompt sent")
    assert "Try once more." in agent.prompts()[1]
