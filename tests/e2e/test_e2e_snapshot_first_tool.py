"""A turn's undo snapshot runs beside its request, yet is complete before the agent's first tool.

The real Claude CLI (warm, as the daemon keeps it, and one-shot) and a real ACP agent, on the
offline fakes, with `bypassPermissions` (no permission request to hold) and a tool call in the
very first response. The snapshot is made slow: it waits, up to a bound, for the file the tool
writes. Were the tool let run beside the snapshot, the file would be there in the turn's
"before" tree and `undo` would not take it back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents import start_turn
from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import AgentConfig, Settings
from agentdoc.daemon.pool import WarmPool
from agentdoc.records import snapshots
from agentdoc.records.shadow import Shadow
from agentdoc.turn import TurnRunner, hooks
from tests.support.agents import WRITE_TOOLS, agent_command, agent_env, fake_api_for
from tests.support.claude_cli import claude_env, require_claude
from tests.support.clearance import own_leave

pytestmark = pytest.mark.e2e

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nMake the file.\n"
MADE = "made.txt"
# The slowed snapshot waits for the turn's request (at most REQUEST seconds: an agent that
# holds its prompt sends none meanwhile), then for the tool's file (at most TOOL seconds). A
# tool let run beside the snapshot writes the file well within that (the fake API answers at
# once); a tool held until the snapshot ends never does.
REQUEST = 15.0
TOOL = 4.0


def slowed(monkeypatch: pytest.MonkeyPatch, made: Path, api: FakeMessagesAPI) -> list[bool]:
    """Make the snapshot hook's `before_turn` slow as above; the list says whether the file
    was there when the snapshot was taken."""
    seen: list[bool] = []
    original: Callable[..., None] = snapshots.before_turn

    def slow(*args: Any, **kwargs: Any) -> None:
        with contextlib.suppress(TimeoutError):
            api.wait_for_requests(1, timeout=REQUEST)
        deadline = time.monotonic() + TOOL
        while not made.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append(made.exists())
        original(*args, **kwargs)

    monkeypatch.setattr(hooks, "snapshot_before", slow)
    return seen


def turn_changes(doc: Path, work: Path, environ: dict[str, str]) -> list[str]:
    """The files undo would take back for the turn (its before and after trees)."""
    store: Shadow = snapshots.shadow_for(doc, environ)
    [entry] = snapshots.read_record(store)[1]
    assert entry.folder == str(work.resolve()) and entry.before and entry.after, entry
    return [change.path for change in store.changes(entry.before, entry.after)]


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "one-shot"])
def test_claudes_first_tool_waits_for_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm: bool
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    doc = work / "chat.md"
    doc.write_text(DOC)
    made = {"file_path": str(work / MADE), "content": "made by the tool\n"}
    tool = {"type": "tool_use", "name": "Write", "input": made}
    settings = Settings(
        claude=str(require_claude()), flush_interval=0.05, permission_mode="bypassPermissions"
    )
    pool = WarmPool()
    with FakeMessagesAPI([[tool], [{"type": "text", "text": "Made it."}]]) as api:
        # The CLI refuses bypassPermissions as root outside a sandbox; this is one.
        env = claude_env(api, tmp_path / "home", IS_SANDBOX="1")
        seen = slowed(monkeypatch, work / MADE, api)
        launcher = pool.launcher(doc) if warm else start_turn
        try:
            runner = TurnRunner(
                doc, settings, clear=own_leave, mode="start", environ=env, launcher=launcher
            )
            outcome = runner.run()
        finally:
            pool.close_all()
    assert outcome.state == "done" and "Made it." in doc.read_text()
    assert (work / MADE).read_text() == "made by the tool\n"
    assert seen == [False]  # the tool had not run when the snapshot was taken
    assert turn_changes(doc, work, env) == [MADE]


def test_an_acp_agents_first_tool_waits_for_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Gemini CLI has a mode that runs every tool unasked (yolo) for bypassPermissions; Zed's
    # Claude adapter, as root, has none, and the policy then puts it in its most-asking mode.
    name = "gemini"
    work = tmp_path / "work"
    work.mkdir()
    doc = work / "chat.md"
    doc.write_text(DOC.replace("agentdoc: {}", f"agentdoc:\n  agent: {name}"))
    tool = WRITE_TOOLS[name](work, MADE, "made by the tool\n")
    with fake_api_for(name, script=[[tool], [{"type": "text", "text": "Made it."}]]) as api:
        env = agent_env(name, api, tmp_path / "home")
        seen = slowed(monkeypatch, work / MADE, api)
        settings = Settings(
            flush_interval=0.05,
            permission_mode="bypassPermissions",
            agents={name: AgentConfig(command=tuple(agent_command(name)), env=env)},
        )
        pool = WarmPool()
        try:
            runner = TurnRunner(
                doc,
                settings,
                clear=own_leave,
                mode="start",
                environ=env,
                launcher=pool.launcher(doc),
            )
            outcome = runner.run()
        finally:
            pool.close_all()
    assert outcome.state == "done" and "Made it." in doc.read_text(), doc.read_text()
    assert (work / MADE).read_text() == "made by the tool\n"
    assert seen == [False]
    assert turn_changes(doc, work, env) == [MADE]
