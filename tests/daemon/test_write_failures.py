"""A write that fails mid-reply ends the turn as failed, and the open reply gets closed.

A full disk, or the document moved away while the reply streamed, used to leave the reply open
for good: live markers and "(streaming…)" in the file, the status saying streaming, and the
next turn appended below the open region.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from pathlib import Path

import pytest

from agentdoc.cli import main
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError
from agentdoc.records import journal, status
from agentdoc.records.recovery import open_regions
from agentdoc.turn.runner import TurnRunner
from tests.support.clearance import own_leave
from tests.support.daemon import DOC, Running, make_daemon, save_and_wait_streaming
from tests.support.fake_claude import FakeClaude, install_as_claude
from tests.support.waiting import wait_for


def _closed(path: Path) -> bool:
    text = path.read_text()
    return not open_regions(text) and "[!WARNING]" in text


def test_a_full_disk_mid_reply_fails_the_turn_and_the_next_run_closes_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    gate: Path,
    gated_claude: FakeClaude,
    disk_full: threading.Event,
) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(DOC + "first\n")
    raised: list[BaseException] = []
    runner = TurnRunner(doc, gated_claude.settings(), clear=own_leave, environ=gated_claude.env)

    def run() -> None:
        try:
            runner.run()
        except AgentdocError as exc:
            raised.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    wait_for(lambda: "w10 " in doc.read_text(), what="streaming")
    disk_full.set()  # the disk fills up
    gate.touch()
    thread.join(30)
    assert not thread.is_alive()
    # The turn ended (the CLI stopped) with the reason, instead of streaming on unseen.
    assert len(raised) == 1 and "No space left on device" in str(raised[0])
    # (The status file is on the same full disk: it cannot say more until space is freed.)
    # The reply so far is kept in the journal for whoever closes the region.
    entry = journal.read_journal(doc)
    assert entry is not None and "w10 " in entry.text

    disk_full.clear()  # space is freed; the next run closes the open reply before anything else
    with doc.open("a") as f:
        f.write("\nsecond\n")
    install_as_claude(gated_claude, monkeypatch)
    assert main(["run", str(doc)]) == 0
    text = doc.read_text()
    assert not open_regions(text)
    assert "interrupted" in text
    assert text.index("[!WARNING]") < text.rindex("## User")
    assert document.parse(text).turns[-2].role == "assistant"  # "second" was answered
    current = status.read_status(doc)
    assert current is not None and current.state == "idle"


def test_a_document_moved_mid_reply_ends_the_turn_and_is_closed_where_it_went(
    gate: Path, caplog: pytest.LogCaptureFixture, folder: Path, gated_claude: FakeClaude
) -> None:
    doc, moved = folder / "chat.md", folder / "renamed.md"
    doc.write_text(DOC)
    caplog.set_level(logging.INFO)
    with Running(make_daemon(folder, gated_claude)):
        save_and_wait_streaming(doc, DOC + "first\n")
        subprocess.run(["mv", str(doc), str(moved)], check=True)
        wait_for(lambda: _closed(moved), what="the moved reply closed")
        # The old name's state is gone with it.
        wait_for(lambda: not status.status_path(doc).exists(), what="the old status removed")
        gate.touch()
        # Still serving: a prompt in the moved document is answered there.
        moved.write_text(moved.read_text() + "second\n")
        wait_for(lambda: len(document.parse(moved.read_text()).turns) == 5, what="2nd reply")
    assert not open_regions(moved.read_text())
    gone = [r for r in caplog.records if "no longer exists" in r.getMessage()]
    assert len(gone) <= 1, [r.getMessage() for r in gone]
