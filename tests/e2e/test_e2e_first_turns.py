"""Every first turn is warm: `agentdoc watch` starts a document's real CLI before its prompt.

A new document, one with history but no session, and one whose `agent:` changed each get their
CLI when the editor opens them (or the save that leaves an empty `## User`), and the prompt saved
afterwards runs in that very process. Nothing is timed: a CLI alive before the save, with nothing
sent to the API yet, and the same CLI answering, is what shows it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document import parser as document
from tests.support.claude_watch import answer, ask, served, warm_clis
from tests.support.editors import HISTORY, editor, open_in_editor, vim
from tests.support.processes import run_cli
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def started_with_session(pid: int) -> str | None:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    for arg in args:
        if arg.startswith(b"--session-id="):
            return arg.split(b"=", 1)[1].decode()
    return None


def test_a_new_document_has_its_cli_before_its_first_prompt(tmp_path: Path, folder: Path) -> None:
    doc = folder / "idea.md"
    with served(tmp_path, folder, [answer("A fresh answer.")]) as (api, env, _daemon):
        run_cli(["new", str(doc)], env)
        open_in_editor(doc, tmp_path / "home")
        wait_for(lambda: len(warm_clis(env)) == 1, what="the CLI started ahead")
        [ahead] = warm_clis(env)
        chosen = started_with_session(ahead)
        assert api.requests == []  # started, nothing sent
        ask(doc, "A first question?", "A fresh answer.")
        assert warm_clis(env) == [ahead]
    assert chosen is not None and document.parse(doc.read_text()).meta.session == chosen


def test_an_imported_document_has_its_cli_and_transcript_ready(
    tmp_path: Path, folder: Path
) -> None:
    doc = folder / "imported.md"
    doc.write_text("---\nagentdoc: {}\n---\n" + HISTORY)
    with served(tmp_path, folder, [answer("Lyon is second.")]) as (api, env, _daemon):
        open_in_editor(doc, tmp_path / "home")
        wait_for(lambda: len(warm_clis(env)) == 1, what="the CLI started ahead")
        [ahead] = warm_clis(env)
        ask(doc, "And the second city?", "Lyon is second.")
        assert warm_clis(env) == [ahead]
        [request] = api.requests
    # Its first prompt carried the history the new session did not have.
    assert "capital of France" in request.user_texts()[-1]


def test_a_document_switched_to_claude_has_its_cli_before_the_prompt(
    tmp_path: Path, folder: Path
) -> None:
    doc = folder / "switch.md"
    doc.write_text(
        "---\nagentdoc: {agent: gemini, session: g-1, session_agent: gemini}\n---\n" + HISTORY
    )
    with served(tmp_path, folder, [answer("Claude here.")]) as (api, env, _daemon):
        assert warm_clis(env) == []
        # The person switches the agent in their editor and saves; the prompt comes later.
        editor(
            vim(f"edit {doc}", "%s/agent: gemini, session/agent: claude, session/", "write"),
            tmp_path / "home",
        )
        wait_for(lambda: len(warm_clis(env)) == 1, what="the CLI started ahead")
        [ahead] = warm_clis(env)
        chosen = started_with_session(ahead)
        assert api.requests == []
        ask(doc, "Who is this?", "Claude here.")
        assert warm_clis(env) == [ahead]
    meta = document.parse(doc.read_text()).meta
    assert chosen is not None and (meta.agent, meta.session) == ("claude", chosen)
