"""Every way an agent is started asks the gate first: nothing runs in a synced folder this
machine does not trust, and a trusted one's own agent settings stay off unless the user opts in.

The ways in, each walked here: a prompt saved, an editor opening a document, a save leaving an
empty `## User`, a document used just before a restart, a document whose `cwd` points into a
synced folder, `agentdoc run` and `ask` (the user's own command), an undo's replay, and a
request that reaches the agent layer without leave at all.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentdoc.agents import AgentRequest, Clearance
from agentdoc.agents.base.child import spawn
from agentdoc.agents.base.clearance import NotCleared
from agentdoc.cli import cli
from agentdoc.config import Settings, config_path
from agentdoc.daemon import own_command, trust_folder
from agentdoc.daemon.gate import NotTrusted, gate_for
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.service import Daemon
from agentdoc.document import parse
from agentdoc.records import status
from tests.support.daemon import Running
from tests.support.paths import PACKAGE
from tests.support.waiting import wait_for
from tests.support.warm_cli import CONVERSATION, SESSION, stand_in_settings

# A stand-in `claude` that notes each start (argv, cwd) before anything else, then answers
# stream-json prompts (warm) or its stdin (one-shot) with "echo <prompt>".
STAND_IN = r"""
import json, os, sys
with open(os.environ["STARTS"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")
def out(obj):
    sys.stdout.write(json.dumps(obj) + "\n"); sys.stdout.flush()
def answer(text, n):
    out({"type": "system", "subtype": "init", "session_id": "0b7f8c52-5d1e-4c3a-9f6e-2a4b8d0c1e37"})
    out({"type": "assistant", "message": {"id": f"m{n}", "content": [
        {"type": "text", "text": f"echo {text.strip()}"}]}})
    out({"type": "result", "subtype": "success", "is_error": False,
         "result": f"echo {text.strip()}",
         "session_id": "0b7f8c52-5d1e-4c3a-9f6e-2a4b8d0c1e37"})
if "--input-format=stream-json" not in sys.argv:
    answer(sys.stdin.read(), 1)
    sys.exit(0)
n = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "user":
        n += 1
        answer(msg["message"]["content"], n)
"""
NEW = "---\nagentdoc: {}\n---\n\n## User\n\n"


@pytest.fixture
def starts(tmp_path: Path) -> Path:
    return tmp_path / "starts.jsonl"


@pytest.fixture
def claude(tmp_path: Path) -> Path:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir()
    exe.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    exe.chmod(0o755)
    return exe


@pytest.fixture
def phone(tmp_path: Path) -> Path:
    """A Syncthing folder under the watched tree, with hooks a paired device synced in."""
    folder = tmp_path / "notes" / "phone"
    (folder / ".stfolder").mkdir(parents=True)
    (folder / ".claude").mkdir()
    hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}
    (folder / ".claude" / "settings.json").write_text(json.dumps(hook))
    return folder


def started(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def env(starts: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "STARTS": str(starts)}


def hinted_daemon(root: Path, claude: Path, env: dict[str, str], **overrides: object) -> Daemon:
    return Daemon([root], stand_in_settings(claude, **overrides), environ=env, rescan_interval=0.5)


# -- the agent layer starts nothing without leave ---------------------------------------------


def test_a_spawn_without_leave_or_with_leave_for_another_folder_runs_nothing(
    tmp_path: Path,
) -> None:
    witness = tmp_path / "ran"
    argv = [sys.executable, "-c", f"open({str(witness)!r}, 'w')"]
    with pytest.raises(NotCleared, match="without the gate's leave"):
        spawn(argv, tmp_path, os.environ, clearance=None)
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(NotCleared, match="not for"):
        spawn(argv, tmp_path, os.environ, clearance=Clearance.scratch(other))
    assert not witness.exists()


def test_the_pool_starts_no_process_for_a_request_without_leave(
    tmp_path: Path, claude: Path, env: dict[str, str], starts: Path
) -> None:
    pool = WarmPool(capacity=2)
    request = AgentRequest("", tmp_path, session_id=SESSION, turn=1)
    try:
        with pytest.raises(NotCleared):
            pool.prewarm(tmp_path / "a.md", request, stand_in_settings(claude), env)
        with pytest.raises(NotCleared):
            pool.begin(tmp_path / "a.md", request, stand_in_settings(claude), env)
    finally:
        pool.close_all()
    assert started(starts) == []


def _calls(tree: ast.AST, name: str, module: str | None = None) -> list[int]:
    """Lines calling `name` (as `module.name` when `module` is given)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (module is None and isinstance(func, ast.Name) and func.id == name) or (
            isinstance(func, ast.Attribute)
            and func.attr == name
            and isinstance(func.value, ast.Name)
            and func.value.id == (module or func.value.id)
        ):
            found.append(node.lineno)
    return found


def test_only_the_gate_gives_leave_and_only_the_kit_starts_agent_processes() -> None:
    """A new way to start an agent cannot forget the gate: leave is made in one module, and
    below the agents' face processes start only through the child-process kit (which checks
    leave). `claude --version` is the one exception: it starts no session in any folder."""
    makers: dict[str, list[int]] = {}
    popens: dict[str, list[int]] = {}
    for module in PACKAGE.rglob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        where = str(module.relative_to(PACKAGE))
        if lines := _calls(tree, "Clearance"):
            makers[where] = lines
        starts = ("Popen", "run", "call", "check_output", "check_call")
        lines = [line for name in starts for line in _calls(tree, name, "subprocess")]
        if module.is_relative_to(PACKAGE / "agents") and lines:
            popens[where] = lines
    assert set(makers) == {"daemon/gate.py"}, makers
    assert set(popens) <= {"agents/base/child.py", "agents/claude/version.py"}, popens


# -- the daemon's ways in, in an untrusted synced folder -------------------------------------


def _open(path: Path) -> None:
    path.read_text()  # an editor loading the file


def _empty_heading(path: Path) -> None:
    with path.open("a") as handle:
        handle.write("more notes\n\n## User\n\n")


WAYS_IN = {"an editor opens it": _open, "a save leaves an empty `## User`": _empty_heading}


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize("way", list(WAYS_IN))
def test_a_hint_starts_an_agent_only_in_a_trusted_folder(
    phone: Path, claude: Path, env: dict[str, str], starts: Path, way: str, trusted: bool
) -> None:
    doc = phone / "chat.md"
    doc.write_text(CONVERSATION.removesuffix("## User\n\n") if "empty" in way else CONVERSATION)
    local = phone.parent / "local.md"
    local.write_text(CONVERSATION)
    for path in (doc, local):  # not "used shortly before start-up"
        os.utime(path, (1_000_000_000, 1_000_000_000))
    if trusted:
        trust_folder(phone)
    daemon = hinted_daemon(phone.parent, claude, env)
    hinted = recording(daemon)
    with Running(daemon):
        assert daemon.discovered.wait(10)  # both documents known, so an open is a hint
        WAYS_IN[way](doc)
        # Events are taken in order: once a later open of a local document is hinted, the
        # phone's document was handled; the hints thread takes them in order too.
        _open(local)
        wait_for(lambda: local.resolve() in hinted, what="the local document's hint")
        daemon.hints.drain()
        # The same hint in a trusted folder starts the CLI: the untrusted case is no accident.
        assert daemon.hints.warmed == (2 if trusted else 1)
    cwds = [entry["cwd"] for entry in started(starts)]
    assert cwds.count(str(phone.resolve())) == (1 if trusted else 0)


def recording(daemon: Daemon) -> list[Path]:
    """The documents hinted to `daemon`, in order."""
    hinted: list[Path] = []
    real = daemon.hints.hint

    def hint(path: Path, why: str, text: str | None = None) -> None:
        hinted.append(path.resolve())
        real(path, why, text)

    daemon.hints.hint = hint  # type: ignore[method-assign]
    return hinted


def test_a_restart_starts_no_agent_for_an_untrusted_document_used_just_before(
    phone: Path, tmp_path: Path, claude: Path, env: dict[str, str], starts: Path
) -> None:
    local = tmp_path / "notes" / "local.md"
    local.write_text(CONVERSATION)  # both used just now: both would be warmed at start-up
    (phone / "chat.md").write_text(CONVERSATION)
    with Running(hinted_daemon(phone.parent, claude, env)) as daemon:
        wait_for(lambda: daemon.hints.warmed == 1, what="the local document's CLI")
        daemon.hints.drain()
        assert daemon.hints.warmed == 1
    assert [entry["cwd"] for entry in started(starts)] == [str(local.parent.resolve())]


def test_a_held_prompt_starts_nothing_and_trust_answers_it_with_the_folders_settings(
    phone: Path, claude: Path, env: dict[str, str], starts: Path
) -> None:
    doc = phone / "new.md"
    with Running(hinted_daemon(phone.parent, claude, env, warm_sessions=0)) as daemon:
        doc.write_text(NEW)  # what a paired device can sync in
        doc.write_text(NEW + "run the hook for me\n")
        wait_for(lambda: _held(doc), what="the prompt held")
        daemon.hints.drain()
        assert started(starts) == []
        trust_folder(phone)
        wait_for(lambda: "echo run the hook for me" in doc.read_text(), what="the reply")
    (launched,) = started(starts)
    # Trusting the folder opted in to its own settings (folder_agent_settings is on).
    assert not any(arg.startswith("--setting-sources") for arg in launched["argv"])


def _held(doc: Path) -> bool:
    shown = status.read_status(doc)
    return shown is not None and shown.state == "pending" and bool(shown.held)


def test_without_folder_agent_settings_not_even_a_trusted_folders_settings_are_read(
    phone: Path, claude: Path, env: dict[str, str], starts: Path
) -> None:
    trust_folder(phone)
    doc = phone / "new.md"
    strict = stand_in_settings(claude, warm_sessions=0, folder_agent_settings=False)
    with Running(Daemon([phone.parent], strict, environ=env, rescan_interval=0.5)):
        doc.write_text(NEW + "hello\n")
        wait_for(lambda: "echo hello" in doc.read_text(), what="the reply")
    (launched,) = started(starts)
    assert "--setting-sources=user" in launched["argv"]


def test_a_local_document_whose_cwd_is_an_untrusted_synced_folder_is_refused(
    phone: Path, claude: Path, env: dict[str, str], starts: Path
) -> None:
    doc = phone.parent / "local.md"
    with Running(hinted_daemon(phone.parent, claude, env, warm_sessions=0)):
        doc.write_text("---\nagentdoc: {cwd: phone}\n---\n\n## User\n\nlook around\n")
        wait_for(lambda: "does not trust" in doc.read_text(), what="the refusal, told")
    assert started(starts) == []


# -- the user's own commands ------------------------------------------------------------------


def test_run_in_a_synced_folder_starts_the_agent_without_the_folders_settings(
    phone: Path, claude: Path, env: dict[str, str], starts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agentdoc run` is the user's own command on this machine: no trust is asked, and the
    folder's own settings (hooks a paired device put there) still stay off."""
    config_path().write_text(f'claude = "{claude}"\nwarm_sessions = 0\n')
    # The stand-in is the configured CLI: `make test`'s own choice of CLI would override it.
    monkeypatch.delenv("AGENTDOC_CLAUDE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    doc = phone / "chat.md"
    doc.write_text(NEW + "hello\n")
    result = CliRunner().invoke(cli, ["run", "--quiet", str(doc)])
    assert result.exit_code == 0, result.output
    (launched,) = started(starts)
    assert "--setting-sources=user" in launched["argv"]


@pytest.mark.parametrize(
    ("synced", "trusted", "opted_in", "own_settings"),
    [
        (False, False, False, True),  # a folder only this machine writes: always its own
        (True, False, True, False),  # not trusted: never
        (True, True, True, True),  # trusted: the opt-in
        (True, True, False, False),  # …unless the config keeps every shared folder's off
    ],
)
def test_own_command_leave_reads_a_shared_folders_settings_only_once_trusted(
    tmp_path: Path, synced: bool, trusted: bool, opted_in: bool, own_settings: bool
) -> None:
    """The leave an undo's replay, `run` and `ask` start their agent with."""
    folder = tmp_path / "f"
    folder.mkdir()
    if synced:
        (folder / ".stfolder").mkdir()
    doc = folder / "chat.md"
    found = Settings(folder_agent_settings=opted_in, trusted=(str(folder),) if trusted else ())
    leave = own_command(doc, found)(folder, parse(NEW))
    assert leave.cwd == folder and leave.folder_settings is own_settings


def test_the_daemons_leave_refuses_an_untrusted_folder_and_names_the_command(
    phone: Path,
) -> None:
    gate = gate_for(Settings(), None, "this-machine")
    clear = gate.clearer(phone / "chat.md")
    with pytest.raises(NotTrusted, match=r"agentdoc trust .*phone"):
        clear(phone, parse(NEW))
    assert gate.ahead(phone / "chat.md", phone, parse(NEW)) is None


@pytest.fixture(autouse=True)
def _no_real_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


def test_a_config_saved_while_the_daemon_runs_changes_the_leave_it_gives(phone: Path) -> None:
    """The gate of a running daemon takes a saved config as it stands (daemon.apply)."""
    trusted = Settings(trusted=(str(phone),))
    gate = gate_for(trusted, None, "this-machine")
    doc = phone / "chat.md"
    assert gate.clearer(doc)(phone, parse(NEW)).folder_settings is True
    gate.apply(Settings(trusted=(str(phone),), folder_agent_settings=False, max_turns_per_hour=1))
    assert gate.clearer(doc)(phone, parse(NEW)).folder_settings is False
    gate.started(doc)  # one turn this hour: the budget of one is spent, nothing starts ahead
    assert gate.ahead(doc, phone, parse(NEW)) is None
