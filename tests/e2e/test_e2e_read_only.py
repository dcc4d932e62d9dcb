"""A document saved read-only is refused, clearly; once `chmod` makes it writable again, the
prompt its save asked for is sent, and the refusal is no longer told (the real CLI, through
`agentdoc watch`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentdoc.records.status import read_status
from tests.support.claude_watch import TITLED_DOC, served
from tests.support.processes import roles, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def save_read_only(path: Path, text: str) -> None:
    """An editor's temp-and-rename save of a file whose mode is read-only."""
    temp = path.with_name(".locked.tmp")
    temp.write_text(text)
    temp.chmod(0o444)
    os.replace(temp, path)


def test_a_read_only_document_is_answered_once_chmod_makes_it_writable(
    tmp_path: Path, chat_folder: Path
) -> None:
    doc = chat_folder / "chat.md"
    with served(tmp_path, chat_folder, [[{"type": "text", "text": "Now it could."}]]) as (
        api,
        _,
        _d,
    ):
        save_read_only(doc, TITLED_DOC + "Can you answer?\n")
        wait_for(lambda: state_of(doc) == "error", what="the refusal")
        found = read_status(doc)
        assert found is not None and "read-only" in (found.error or ""), found
        assert api.requests == []
        doc.chmod(0o644)
        wait_for(lambda: "Now it could." in doc.read_text(), what="the reply")
        wait_for(lambda: state_of(doc) == "idle", what="the turn to end")

    assert roles(doc) == ["user", "assistant", "user"]
    found = read_status(doc)
    assert found is not None and not found.error, found
