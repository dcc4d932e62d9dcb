"""The turn journal and crash recovery of reply regions left open."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from agentdoc.document import parser as document
from agentdoc.document import splice
from agentdoc.document.ledger import WriteLedger
from agentdoc.records import journal, recovery
from agentdoc.records.recovery import close_orphans, recover, stop_orphan
from tests.support.waiting import wait_for

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nhi\n"


def open_doc(path: Path, nonce: str, partial: str) -> None:
    text = splice.open_reply(DOC, len(DOC), nonce)
    filled = splice.fill_region(text, nonce, partial, "")
    assert filled is not None
    path.write_text(filled)


def crashed_journal(doc: Path, nonce: str, texts: list[str]) -> None:
    """A journal left behind as a killed turn leaves it: written, synced, never closed."""
    j = journal.Journal(doc, nonce, "hi", None)
    for text in texts:
        j.record(text)
    j.sync()
    assert j._file is not None
    j._file.close()  # the process died: the file stays, nothing else happens


def test_journal_records_appends_and_rollbacks(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    j = journal.Journal(doc, "n1", "the prompt", "sess")
    for text in ["Hel", "Hello", "Hello wor", "Second attempt", "Second attempt!"]:
        j.record(text)
    j.sync()
    entry = journal.read_journal(doc)
    assert entry == journal.Entry("n1", "the prompt", "sess", "Second attempt!")
    j.close()
    assert journal.read_journal(doc) is None


def test_a_torn_last_line_keeps_what_came_before(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    crashed_journal(doc, "n1", ["abc"])
    with journal.journal_path(doc).open("a") as f:
        f.write('{"add": "de')  # the crash cut this line
    entry = journal.read_journal(doc)
    assert entry is not None and entry.text == "abc"


def test_recovery_closes_the_region_as_interrupted_with_the_journal_text(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    open_doc(doc, "abcd1234", "Partial te")
    crashed_journal(doc, "abcd1234", ["Partial text that arrived after the last flush"])
    assert recover(doc, WriteLedger())
    text = doc.read_text()
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert "Partial text that arrived after the last flush" in parsed.turns[1].content
    assert "interrupted" in parsed.turns[1].content
    assert parsed.pending_prompt() is None  # never sent again on its own
    assert not journal.journal_path(doc).exists()


def test_regions_owned_by_a_running_turn_are_left_alone() -> None:
    text = splice.open_reply(DOC, len(DOC), "feedbeef")
    assert close_orphans(text, frozenset({"feedbeef"})) == text
    assert "agentdoc:reply" not in close_orphans(text)


def test_nothing_to_recover_leaves_the_file_untouched(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text(DOC)
    assert not recover(doc, WriteLedger())
    assert doc.read_text() == DOC


def _sleeper(*, marker: str | None) -> subprocess.Popen[bytes]:
    code = "import time; time.sleep(60)"
    env = dict(os.environ)
    env.pop(recovery.MARKER, None)
    if marker is not None:
        env[recovery.MARKER] = marker
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True, env=env)


def _orphan(*, marker: str | None) -> int:
    """A sleeper whose parent has exited: an agent whose agentdoc was killed."""
    code = (
        "import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)'], start_new_session=True, "
        "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)"
    )
    env = dict(os.environ)
    env.pop(recovery.MARKER, None)
    if marker is not None:
        env[recovery.MARKER] = marker
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return int(done.stdout)


def _ended(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :].startswith("Z")  # a zombie not yet reaped has ended


def test_recovery_stops_a_cli_run_that_outlived_its_daemon(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    open_doc(doc, "abcd1234", "partial")
    orphan, other = _orphan(marker="999999:0123456789ab"), _orphan(marker=None)
    try:
        crashed_journal(doc, "abcd1234", ["partial"])
        with journal.journal_path(doc).open("a") as f:
            f.write(json.dumps({"pid": orphan}) + "\n")
        recover(doc, WriteLedger())
        wait_for(lambda: _ended(orphan), what="the orphaned CLI run to be stopped")
        # A pid that agentdoc did not start (reused since) is left alone.
        stop_orphan(other)
        assert not _ended(other)
    finally:
        for pid in (orphan, other):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)


def test_a_cli_this_process_still_holds_is_no_orphan() -> None:
    """A warm CLI the daemon keeps for the document's next turn is its own child."""
    warm = _sleeper(marker=recovery.own_marker())
    try:
        stop_orphan(warm.pid)
        assert warm.poll() is None
    finally:
        warm.kill()
        warm.wait()
