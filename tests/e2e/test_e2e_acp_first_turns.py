"""Every first turn is warm over ACP too: `agentdoc watch` starts a document's real agent, shakes
hands and opens its session before the prompt is saved.

A new document, one with history but no session, and one switched to an ACP agent each get
their agent (handshake and `session/new` done) when the editor opens them or the save that
leaves an empty `## User`, and the prompt saved afterwards runs in that very process. Nothing is
timed: an agent alive with its session open before the save, and the same agent answering, is
what shows it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.document import parser as document
from tests.support.contract import ROW, Served, serve
from tests.support.editors import HISTORY, editor, open_in_editor, vim
from tests.support.processes import run_cli
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

AGENT = "opencode"  # the quickest of the three to start
OPENED_AHEAD = "session opened ahead of the prompt"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serve(tmp_path, ROW[AGENT]) as it:
        yield it


def ready_ahead(served: Served) -> list[int]:
    """Wait for the agent started ahead with its session open; its processes."""
    wait_for(lambda: OPENED_AHEAD in served.daemon.log(), OPENED_AHEAD, timeout=served.timeout)
    assert served.api.requests == []  # ready, and nothing asked of the model yet
    return served.agent_processes()


def test_a_new_document_has_its_agent_and_session_before_its_first_prompt(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "idea.md"
    made = run_cli(["new", "--agent", AGENT, str(doc)], served.env)
    assert made.returncode == 0, made.stderr
    open_in_editor(doc, tmp_path / "home")
    ahead = ready_ahead(served)
    assert ahead
    served.turn("A first question?", "A fresh answer.", doc=doc)
    assert served.agent_processes() == ahead
    assert document.parse(doc.read_text()).meta.session  # the session opened ahead


def test_an_imported_document_has_its_agent_ready_and_sends_the_transcript(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "imported.md"
    doc.write_text(f"---\nagentdoc: {{agent: {AGENT}}}\n---\n" + HISTORY)
    open_in_editor(doc, tmp_path / "home")
    ahead = ready_ahead(served)
    served.turn("And the second city?", "Lyon is second.", doc=doc)
    assert served.agent_processes() == ahead
    # Its first prompt carried the history the new session did not have.
    texts = served.api.user_texts(served.api.requests[-1])
    assert any("capital of France" in text for text in texts), texts


def test_a_document_switched_to_an_acp_agent_has_it_before_the_prompt(
    served: Served, tmp_path: Path
) -> None:
    doc = tmp_path / "docs" / "switch.md"
    doc.write_text(
        "---\nagentdoc: {agent: claude, session: c-1, session_agent: claude}\n---\n" + HISTORY
    )
    # The person switches the agent in their editor and saves; the prompt comes later.
    editor(
        vim(f"edit {doc}", f"%s/agent: claude, session/agent: {AGENT}, session/", "write"),
        tmp_path / "home",
    )
    ahead = ready_ahead(served)
    served.turn("Who is this?", "OpenCode here.", doc=doc)
    assert served.agent_processes() == ahead
    meta = document.parse(doc.read_text()).meta
    assert meta.agent == AGENT and meta.session not in (None, "c-1")
