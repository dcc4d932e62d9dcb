"""The real CLI's output, however big or however wrapped, reaches the document whole.

A reply of a few hundred kilobytes used to end as "interrupted": the CLI writes its last lines
(the whole reply again, twice) and exits, and whatever a full pipe had not taken by then was
lost. A wrapper script that leaves a background child holding stdout used to keep the turn open
for the child's whole life.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.document import parser as document
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env, require_claude
from tests.support.clearance import own_leave

pytestmark = pytest.mark.e2e

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nA long answer, please.\n"


def _long_text(size: int) -> str:
    line = "The quick brown fox jumps over the lazy dog; 0123456789 é ü 日本.\n"
    return line * (size // len(line.encode()) + 1) + "THE END."


@pytest.mark.parametrize("size", [1_000_000, 5_000_000], ids=["1MB", "5MB"])
def test_a_multi_megabyte_reply_ends_done_and_byte_exact(tmp_path: Path, size: int) -> None:
    text = _long_text(size)
    assert len(text.encode()) >= size
    doc = tmp_path / "long.md"
    doc.write_text(DOC)
    settings = Settings(claude=str(require_claude()), flush_interval=0.05)
    script = [{"content": [{"type": "text", "text": text}], "chunk_chars": 4000}]
    with FakeMessagesAPI(script) as api:
        outcome = TurnRunner(
            doc, settings, clear=own_leave, environ=claude_env(api, tmp_path / "home")
        ).run()
    assert outcome.state == "done", outcome.reply.error
    assert outcome.reply.text() == text
    reply = document.parse(doc.read_text()).turns[1].content
    assert text in reply


def _wrapper(tmp_path: Path, claude: Path) -> Path:
    """A `claude` wrapper like a user's: it starts a background job that inherits stdout."""
    script = tmp_path / "claude-wrapper"
    pidfile = tmp_path / "leftover.pid"
    script.write_text(
        f'#!/bin/sh\n( sleep 45 & echo $! > \'{pidfile}\'; wait ) &\n"{claude}" "$@"\n'
    )
    script.chmod(0o755)
    return script


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/stat")
    return not status.exists() or status.read_text().split()[2] != "Z"


def test_a_wrapper_child_holding_stdout_does_not_hold_the_turn(tmp_path: Path) -> None:
    doc = tmp_path / "wrapped.md"
    doc.write_text(DOC)
    wrapper = _wrapper(tmp_path, require_claude())
    # A stall timeout far below the child's 45 s: the turn must not need it either.
    settings = Settings(claude=str(wrapper), flush_interval=0.05, stall_timeout=30)
    script = [[{"type": "text", "text": "Done quickly."}]]
    with FakeMessagesAPI(script) as api:
        outcome = TurnRunner(
            doc, settings, clear=own_leave, environ=claude_env(api, tmp_path / "home")
        ).run()
    assert outcome.state == "done", outcome.reply.error
    assert "Done quickly." in doc.read_text()
    leftover = int((tmp_path / "leftover.pid").read_text())
    try:
        assert not _alive(leftover), "the wrapper's background child was left running"
    finally:
        if _alive(leftover):
            os.kill(leftover, signal.SIGKILL)
