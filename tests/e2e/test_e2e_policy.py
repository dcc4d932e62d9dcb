"""One permission policy for every agent, with the real agents on the offline fakes.

Under the user's `permission_mode = "default"` and `"acceptEdits"`, a shell command the model
asks for is shown in the document as an approval, and nothing runs until its box is ticked:
Claude Code (natively), Gemini CLI, Codex (codex-acp), OpenCode, and the agents a user adds in
the config only (`[agents.NAME]`): Zed's Claude adapter, Qwen Code (which starts in its own
`auto` mode, where a model decides what runs unasked) and pi. pi offers no mode that asks: its
turn is refused before the prompt reaches it, and the document says what would let it run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi.script import ScriptEntry
from tests.support.agents import doctor_check
from tests.support.contract import ROW, Served, serve, without_own_permission
from tests.support.processes import run_cli, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

AGENTS = ("claude", "gemini", "codex", "opencode", "claude-acp", "qwen", "pi")
POLICIES = ("default", "acceptEdits")
APPROVAL = "<!-- agentdoc:approval "
TIMEOUT = 90.0
DOC = "---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\nRun the command, please.\n"
# The first box of each agent's approval block that lets the command run once.
ALLOW = re.compile(r"^> - \[ \] (allow|Allow|Allow once|Yes|Yes, proceed)$", re.MULTILINE)


def shell(name: str, cwd: Path, command: str) -> dict[str, Any]:
    """The model's request to run `command`, as the agent's own shell tool takes it."""
    arguments: dict[str, Any]
    if name in ("claude", "claude-acp"):
        tool, arguments = "Bash", {"command": command, "description": "Make a file"}
    elif name in ("gemini", "qwen"):
        tool, arguments = "run_shell_command", {"command": command, "description": "Make a file"}
        if name == "qwen":
            arguments["is_background"] = False
    elif name == "codex":
        tool = "exec_command"
        arguments = {
            "cmd": command,
            "workdir": str(cwd),
            "sandbox_permissions": "require_escalated",
            "justification": "make the file the user asked for",
        }
    else:  # opencode, pi
        tool, arguments = "bash", {"command": command, "description": "Make a file"}
    return {"type": "tool_use", "name": tool, "input": arguments}


def asked(doc: Path) -> bool:
    return state_of(doc) == "waiting" and APPROVAL in doc.read_text()


@contextmanager
def served(
    root: Path, name: str, policy: str, script: list[ScriptEntry], own: Sequence[str] = ()
) -> Iterator[Served]:
    """The daemon with `policy` for every agent and `own` lines in this agent's entry alone
    (its asking comes from agentdoc's policy, not from the agent's own config)."""
    with serve(
        root, ROW[name], policy=policy, own=own, agent=without_own_permission, script=script
    ) as it:
        it.timeout = TIMEOUT
        yield it


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", [a for a in AGENTS if a != "pi"])
def test_a_shell_command_is_asked_in_the_document_and_runs_only_once_ticked(
    tmp_path: Path, name: str, policy: str
) -> None:
    made = tmp_path / "docs" / "made-by-the-command.txt"
    script: list[ScriptEntry] = [
        # Through `sh -c`: Claude's acceptEdits takes a bare `touch` in the folder for an edit.
        [shell(name, made.parent, f"sh -c 'touch {made.name}'")],
        [{"type": "text", "text": "The file is made."}],
    ]
    with served(tmp_path, name, policy, script) as it:
        it.doc.write_text(DOC.format(name=name))
        try:
            wait_for(lambda: asked(it.doc) or made.exists(), what="the approval", timeout=TIMEOUT)
        except AssertionError:
            print(it.doc.read_text()[-3000:])
            raise
        text = it.doc.read_text()
        assert not made.exists(), f"the command ran before anyone ticked a box: {text[-2000:]}"
        assert made.name in text, text[-2000:]  # the command is shown, as the agent asks it
        box = ALLOW.search(text)
        assert box is not None, text[-2000:]
        it.doc.write_text(text.replace(box[0], box[0].replace("[ ]", "[x]"), 1))
        wait_for(
            lambda: "The file is made." in it.doc.read_text() and state_of(it.doc) == "idle",
            what="the reply after the command",
            timeout=TIMEOUT,
        )
        assert made.exists()


# Under "default", the contract's test_a_deny_with_a_reason_reaches_the_agent[pi].
def test_pi_is_told_plainly_and_runs_nothing(tmp_path: Path, policy: str = "acceptEdits") -> None:
    made = tmp_path / "docs" / "made-by-the-command.txt"
    script: list[ScriptEntry] = [[shell("pi", made.parent, f"touch {made.name}")]]
    with served(tmp_path, "pi", policy, script) as it:
        it.doc.write_text(DOC.format(name="pi"))
        wait_for(
            lambda: "has no mode that asks" in it.doc.read_text(),
            what="the callout",
            timeout=TIMEOUT,
        )
        text = it.doc.read_text()
        assert "may run every tool without asking" in text
        assert 'permission_mode = "bypassPermissions" under [agents.pi]' in text
        assert text.rstrip().endswith("Run the command, please.") or "## User" in text
        assert not it.api.requests, "the prompt reached pi's model"
        assert not made.exists()
        shown = run_cli(["status", str(it.doc)], it.env)
        assert "has no mode that asks" in shown.stdout, shown.stdout


def test_pi_runs_once_its_own_entry_lets_it_run_unasked(tmp_path: Path) -> None:
    """The setting the notice names: `permission_mode` under `[agents.pi]`, for pi alone."""
    made = tmp_path / "docs" / "made-by-the-command.txt"
    script: list[ScriptEntry] = [
        [shell("pi", made.parent, f"touch {made.name}")],
        [{"type": "text", "text": "The file is made."}],
    ]
    with served(
        tmp_path, "pi", "default", script, own=['permission_mode = "bypassPermissions"']
    ) as it:
        it.doc.write_text(DOC.format(name="pi"))
        wait_for(
            lambda: "The file is made." in it.doc.read_text() and state_of(it.doc) == "idle",
            what="pi's reply",
            timeout=TIMEOUT,
        )
        assert made.exists()
        assert APPROVAL not in it.doc.read_text()  # pi never asks


def test_doctor_names_an_agent_that_cannot_be_held_to_the_policy(tmp_path: Path) -> None:
    """pi is named, with what lets it run (Qwen Code's modes:
    tests/unit/agents/test_acp_options.py)."""
    pi = doctor_check(tmp_path, "pi", logged_in=True)
    assert pi["outcome"] == "warn", pi
    assert "pi has no mode that asks before it runs a tool (it offers: off)" in pi["detail"]
    assert 'permission_mode = "bypassPermissions" under [agents.pi]' in pi["detail"]
