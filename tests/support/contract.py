"""Every agent agentdoc drives, as one table, and one `agentdoc watch` serving a document with it.

A row says how to start the agent (its program and offline environment, `tests/support/agents.py`
or `claude_cli.py`), which fake vendor API it calls, which tool writes a file, the boxes of its
permission request, and what it cannot do — each absence with the reason agentdoc gives or the
agent's own limit. An agent added tomorrow is one more row: the behaviour tests of
`tests/e2e/test_agent_contract.py` then hold it to the same promises as the others.

`serve` is the set-up every end-to-end test of a real agent under the daemon shares: a scratch
home for the agent and for agentdoc, the fake API, the user's config, a document, the daemon
running, and afterwards the check that no process of the agent outlived it.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.document import parser as document
from tests.support.agents import (
    WRITE_TOOLS,
    agent_command,
    agent_env,
    fake_api_for,
    is_claude_side_request,
    is_codex_title_request,
    is_qwen_side_request,
    is_title_request,
    write_tool,
)
from tests.support.claude_cli import claude_env, require_claude
from tests.support.processes import (
    QUICK_SETTINGS,
    WatchProcess,
    base_env,
    kill_all,
    processes_with_env,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

TIMEOUT = 60.0
APPROVAL = "<!-- agentdoc:approval "
ENDED = ("idle", "error")
# A new conversation with the agent NAME.
DOC = "---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\n"

WriteTool = Callable[[Path, str, str], dict[str, Any]]


@dataclass(frozen=True)
class AgentRow:
    """One agent as the contract knows it.

    `allow` / `deny`: the labels of the boxes that let a tool run once and refuse it.
    `asks`: None where the agent asks before a write under agentdoc's default policy, else why
    it never does (what agentdoc then says is part of the contract).
    `thinking`: None where the agent passes the model's thinking on, else why it does not.
    `copies`: the agent copies its own session (`session/fork`, Claude's `--fork-session`), so a
    fork and an undo continue the model's own messages; otherwise agentdoc opens a new session
    and says it sent it the conversation so far.
    `fork_note`: the words of the fork's first footer saying how its session came about.
    """

    name: str
    write: WriteTool
    allow: str
    deny: str
    copies: bool
    fork_note: str
    asks: str | None = None
    thinking: str | None = None
    native: bool = False  # Claude Code through stream-json, not an ACP agent
    # The agent's own calls beside a turn (titles, suggestions): not the turn's request.
    side_call: Callable[[Any], bool] = is_title_request
    # Lines of the agent's `[agents.NAME]` entry besides its command (its own policy).
    own: tuple[str, ...] = ()
    # Where the agent passes on no word of a refused request (so the failure notice cannot quote
    # the API): why, and what the notice says instead.
    api_words: tuple[str, str] | None = None

    def __str__(self) -> str:
        return self.name


_FORKED = "session forked"
_SEEDED = "new session, sent the conversation so far"
PI_NEVER_ASKS = (
    "pi offers no mode that asks before a tool runs: agentdoc refuses its turns under the "
    "asking policies and runs it only where its own entry says bypassPermissions"
)

PI_API_ERROR = (
    "pi-acp ends the refused turn with no error text at all",
    "its API request failed (its log may say why)",
)

ROWS: tuple[AgentRow, ...] = (
    AgentRow("claude", write_tool("Write"), "allow", "deny", copies=True,
             fork_note="forked from chat.md, turn ", native=True,
             side_call=is_claude_side_request),
    AgentRow("gemini", WRITE_TOOLS["gemini"], "Allow", "Reject", copies=False, fork_note=_SEEDED),
    AgentRow("codex", WRITE_TOOLS["codex"], "Yes, proceed",
             "No, and tell Codex what to do differently", copies=True, fork_note=_FORKED,
             side_call=is_codex_title_request),
    AgentRow("opencode", WRITE_TOOLS["opencode"], "Allow once", "Reject", copies=True,
             fork_note=_FORKED),
    AgentRow("claude-acp", WRITE_TOOLS["claude-acp"], "Yes", "No", copies=True,
             fork_note=_FORKED, side_call=is_claude_side_request),
    AgentRow("qwen", WRITE_TOOLS["qwen"], "Allow", "Reject", copies=False, fork_note=_SEEDED,
             side_call=is_qwen_side_request),
    AgentRow("pi", WRITE_TOOLS["pi"], "", "", copies=False, fork_note=_SEEDED,
             asks=PI_NEVER_ASKS, own=('permission_mode = "bypassPermissions"',),
             api_words=PI_API_ERROR),
)  # fmt: skip
ROW = {row.name: row for row in ROWS}


@dataclass
class Served:
    """One daemon serving `folder` (with `doc` in it) for one agent on its fake API."""

    row: AgentRow
    api: FakeMessagesAPI
    env: dict[str, str]
    agent_home: Path
    folder: Path
    doc: Path
    daemon: WatchProcess
    timeout: float = TIMEOUT

    @property
    def name(self) -> str:
        return self.row.name

    def agent_processes(self) -> list[int]:
        """The agent's own processes (they alone have its scratch HOME)."""
        found = processes_with_env("HOME", str(self.agent_home))
        return sorted(set(found) - {self.daemon.pid})

    def script(self, *entries: ScriptEntry) -> None:
        """What the model answers next; whatever an earlier turn left unanswered is dropped
        (Codex's "no" ends a turn before the reply scripted after the tool call)."""
        self.api.clear()
        self.api.add(*entries)

    def ask(self, prompt: str, doc: Path | None = None) -> None:
        """Type `prompt` under the document's empty `## User` and save."""
        path = doc or self.doc
        text = path.read_text()
        assert text.endswith("## User\n\n"), text[-300:]
        path.write_text(text + prompt + "\n")

    def idle_with(self, text: str, doc: Path | None = None) -> None:
        path = doc or self.doc
        try:
            wait_for(
                lambda: text in path.read_text() and state_of(path) == "idle",
                what=f"{text!r} in {path.name}",
                timeout=self.timeout,
            )
        except AssertionError:
            print(path.read_text()[-2500:])  # what the document shows instead
            raise

    def turn(self, prompt: str, reply: str, doc: Path | None = None) -> None:
        """One whole turn: the model answers `reply` to `prompt`."""
        self.script([{"type": "text", "text": reply}])
        self.ask(prompt, doc)
        self.idle_with(reply, doc)

    def reply(self, n: int, doc: Path | None = None) -> str:
        return document.parse((doc or self.doc).read_text()).turns[2 * n - 1].content

    def waiting(self, doc: Path | None = None) -> bool:
        path = doc or self.doc
        return state_of(path) == "waiting" and APPROVAL in path.read_text()

    def tick(self, label: str, below: str = "", doc: Path | None = None) -> None:
        """Tick the box `label` of the open approval and save, `below` written under it."""
        path = doc or self.doc
        text = path.read_text()
        # The whole label: Gemini's "Allow" box comes after "Allow for this session".
        box = re.search(rf"^> - \[ \] {re.escape(label)}[ \t]*\n", text, re.MULTILINE)
        assert box is not None, text[-1500:]
        line = box[0].replace("[ ]", "[x]", 1)
        path.write_text(text[: box.start()] + line + below + text[box.end() :])

    def turn_request(self) -> Any:
        """The model call of the last turn (not a title or suggestion of the agent's own)."""
        return [r for r in self.api.requests if not self.row.side_call(r)][-1]


def config_lines(row: AgentRow, env: dict[str, str], *, policy: str | None = None) -> list[str]:
    """The user's config: quick settles, `policy` for every agent, and the agent's entry."""
    lines = [f"{key} = {json.dumps(value)}" for key, value in QUICK_SETTINGS.items()]
    if policy is not None:
        lines.append(f"permission_mode = {json.dumps(policy)}")
    if row.native:
        return lines
    lines += ["", *agent_entry(row.name, env, row.own)]
    if row.asks is not None:  # the same agent under the policy alone: agentdoc refuses it
        lines += ["", *agent_entry(row.name, env, as_name=asked(row))]
    return lines


def asked(row: AgentRow) -> str:
    """The name of the row's agent entered without its own policy."""
    return f"{row.name}-asked"


def agent_entry(
    name: str, env: dict[str, str], own: Sequence[str] = (), as_name: str | None = None
) -> list[str]:
    """The config's `[agents.NAME]` table (or `as_name`'s) for the agent `name`: its command,
    `own` lines, and its offline environment."""
    entry = as_name or name
    lines = [f"[agents.{entry}]", f"command = {json.dumps(agent_command(name))}", *own, ""]
    lines += [f"[agents.{entry}.env]"]
    return lines + [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]


def new_api(row: AgentRow) -> FakeMessagesAPI:
    return FakeMessagesAPI() if row.native else fake_api_for(row.name)


@contextmanager
def serve(
    root: Path,
    row: AgentRow,
    *,
    doc: str | None = None,
    policy: str | None = None,
    own: Sequence[str] | None = None,
    extra: Sequence[str] = (),
    agent: Callable[[dict[str, str]], None] | None = None,
    script: Sequence[ScriptEntry] = (),
) -> Iterator[Served]:
    """A ready daemon over `root/docs` for the agent of `row`, its fake API started first.

    `doc`: the text of `docs/chat.md` (a new conversation with the agent by default; None
    leaves the file to the test). `own`: the agent entry's own lines in place of the row's.
    `extra`: more lines at the config's end. `agent`: changes the agent's environment."""
    folder, agent_home, home = root / "docs", root / "agent-home", root / "home"
    for made in (folder, agent_home, home):
        made.mkdir(exist_ok=True)
    path = folder / "chat.md"
    if doc is not None:
        path.write_text(doc)
    if row.native:
        agent_home = home  # the CLI runs with the daemon's own HOME
    with new_api(row) as api:
        api.add(*script)
        env_of_agent = {} if row.native else agent_env(row.name, api, agent_home)
        if agent is not None:
            agent(env_of_agent)
        chosen = row if own is None else AgentRow(**{**row.__dict__, "own": tuple(own)})
        config = root / "config.toml"
        lines = config_lines(chosen, env_of_agent, policy=policy)
        config.write_text("\n".join([*lines, "", *extra]) + "\n", encoding="utf-8")
        if row.native:
            env = claude_env(
                api, home, AGENTDOC_CLAUDE=str(require_claude()), AGENTDOC_CONFIG=str(config)
            )
        else:
            env = base_env(home, AGENTDOC_CONFIG=str(config))
        try:
            with watching(folder, env, root / "watch.log") as daemon:
                yield Served(row, api, env, agent_home, folder, path, daemon)
                daemon.send(signal.SIGTERM)  # a daemon that stops closes its warm agents
                daemon.wait(30)
            leftovers = processes_with_env("HOME", str(agent_home))
            assert not leftovers, f"{row.name} outlived the daemon that started it: {leftovers}"
        finally:
            kill_all(processes_with_env("HOME", str(agent_home)))


def without_own_permission(env: dict[str, str]) -> None:
    """OpenCode's asking left to agentdoc's policy, not to its own config."""
    if "OPENCODE_CONFIG_CONTENT" in env:
        config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
        del config["permission"]
        env["OPENCODE_CONFIG_CONTENT"] = json.dumps(config)
