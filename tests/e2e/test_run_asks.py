"""`agentdoc run` and a tool that needs permission: asked on the terminal, or told why not.

A one-shot CLI refuses such a tool without asking. Run from a pipe or a script, `run` says so
in the tool's block and on stderr; run in a terminal (a real pseudo-terminal here), it asks
there and passes the answer on, the same way `agentdoc approve` does.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from agentdoc.agents import ToolPart
from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.cli.asker import PROMPT, parse_choice
from agentdoc.document import NOT_ASKED_HINT, render_tool
from agentdoc.document import parser as document
from tests.support.claude_cli import claude_env, require_claude
from tests.support.paths import REPO_ROOT
from tests.support.processes import CLI

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nWrite the greeting file.\n"
REFUSED = "Claude requested permissions to write to /w/out.txt, but you haven't granted it yet."


@pytest.mark.parametrize(
    ("line", "choice"),
    [
        ("y\n", ("allow", "")),
        ("YES\n", ("allow", "")),
        ("a\n", ("always", "")),
        ("n\n", ("deny", "")),
        ("n not that file\n", ("deny", "not that file")),
        ("y but why\n", ("allow", "")),  # a reason only goes with a denial
        ("\n", None),
        ("maybe\n", None),
    ],
)
def test_parse_choice(line: str, choice: tuple[str, str] | None) -> None:
    assert parse_choice(line) == choice


@pytest.mark.parametrize(
    ("result", "hinted"),
    [
        (REFUSED, True),  # the CLI had nobody to ask
        ("The user denied this.", False),  # a person said no
        ("File written.", False),
    ],
)
def test_a_tool_refused_unasked_says_what_would_let_the_person_approve(
    result: str, hinted: bool
) -> None:
    part = ToolPart(
        "t1", "Write", {"file_path": "/w/out.txt"}, result, is_error=result != "File written."
    )
    assert (NOT_ASKED_HINT in render_tool(part)) is hinted


def write_script(target: Path) -> list[ScriptEntry]:
    tool = {
        "type": "tool_use",
        "name": "Write",
        "input": {"file_path": str(target), "content": "hi\n"},
    }
    return [[tool], [{"type": "text", "text": "Done writing."}]]


def agentdoc_env(api: FakeMessagesAPI, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = claude_env(api, home, AGENTDOC_CLAUDE=str(require_claude()))
    env["AGENTDOC_CONFIG"] = str(tmp_path / "no-config.toml")
    return env


@pytest.mark.e2e
def test_run_without_a_terminal_says_why_the_tool_was_refused(tmp_path: Path) -> None:
    doc, target = tmp_path / "chat.md", tmp_path / "out.txt"
    doc.write_text(DOC)
    with FakeMessagesAPI(write_script(target)) as api:
        done = subprocess.run(
            [*CLI, "run", str(doc)],
            env=agentdoc_env(api, tmp_path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO_ROOT,
        )
    assert done.returncode == 0, done.stderr
    assert not target.exists()
    reply = document.parse(doc.read_text()).turns[1].content
    assert NOT_ASKED_HINT in reply and "Done writing." in reply
    assert "note: the agent was refused Write without being asked." in done.stderr


def read_until(fd: int, wanted: str, timeout: float = 60.0) -> str:
    """Terminal output until `wanted` shows up (or the process ends, or time runs out)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted.encode() not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, (
            f"no {wanted!r} on the terminal; it showed:\n{seen.decode(errors='replace')}"
        )
        ready, _, _ = select.select([fd], [], [], min(remaining, 0.5))
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other end closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


@pytest.mark.e2e
@pytest.mark.parametrize(("answer", "written"), [("y", True), ("n not now", False)])
def test_run_in_a_terminal_asks_there(tmp_path: Path, answer: str, written: bool) -> None:
    doc, target = tmp_path / "chat.md", tmp_path / "out.txt"
    doc.write_text(DOC)
    with FakeMessagesAPI(write_script(target)) as api:
        main, child = pty.openpty()
        env = {**agentdoc_env(api, tmp_path), "TERM": "xterm", "COLUMNS": "200"}
        proc = subprocess.Popen(
            [*CLI, "run", str(doc)], env=env, stdin=child, stdout=child, stderr=child,
            cwd=REPO_ROOT, start_new_session=True,
        )  # fmt: skip
        os.close(child)
        try:
            shown = read_until(main, PROMPT.strip())
            assert f"Write: {target}" in shown, shown[-400:]
            os.write(main, f"{answer}\n".encode())
            read_until(main, "Done writing.")
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
            os.close(main)
    assert target.exists() is written
    reply = document.parse(doc.read_text()).turns[1].content
    assert "Done writing." in reply and NOT_ASKED_HINT not in reply
    if not written:
        assert "not now" in api.requests[-1].body.__repr__()
