"""User settings: built-in defaults < config file < environment < command-line options.

The config file is TOML at ``$AGENTDOC_CONFIG`` or the XDG config folder
(``~/.config/agentdoc/config.toml`` on Linux). A document's own frontmatter keys (model, effort,
trigger, …) sit between the config file and command-line options: the config gives defaults for
documents that don't say. Permission-related settings are only ever read from here or from the
command line, never from a document (PRODUCT.md §7 promise 6).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentdoc.errors import AgentdocError, allowed

PermissionMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]


DAY = 86400.0
# An agent's name: what a document may say under `agent:`. Never a command: no spaces, no path,
# and never a leading "-", so it can never be read as a flag.
AGENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class AgentConfig(BaseModel):
    """`[agents.NAME]` in the config: how to start an agent (only ever from the user's config)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: tuple[str, ...] = Field(min_length=1, description="program and its arguments")
    env: dict[str, str] = Field(default_factory=dict, description="added to the environment")
    # This agent's own permission policy, over the config's `permission_mode`: how a user lets
    # an agent that cannot be made to ask (pi) run at all, or holds one agent to more asking.
    permission_mode: PermissionMode | None = None

    @field_validator("command")
    @classmethod
    def _a_program(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value[0].strip():
            raise ValueError("must start with the agent's program, not an empty string")
        return value


class Settings(BaseModel):
    # Every duration is finite and bounded: `inf`, `nan` or `1e309` (TOML reads it as inf)
    # would make a sleep or a timer raise deep inside a turn instead of here, naming the key.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    claude: str = Field("claude", description="claude executable (name on PATH or path)")
    model: str | None = None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    flush_interval: float = Field(0.25, gt=0, le=60, description="seconds between streamed writes")
    stall_timeout: float = Field(120.0, gt=0, le=DAY, description="kill a turn silent this long")
    max_retries: int = Field(4, ge=0, le=15, description="CLAUDE_CODE_MAX_RETRIES for the CLI")
    footer: bool = True
    thinking: bool = True
    # How the API returns thinking (Claude Code's `--thinking-display`): newer models send only
    # a signature unless asked; None leaves the CLI's own default.
    thinking_display: Literal["summarized", "omitted", "highlights"] | None = None
    trigger: Literal["save", "marker"] = "save"
    submit_marker: str = "/send"
    settle_step: float = Field(0.3, gt=0, le=60, description="quiet time after a save")
    settle_max: float = Field(2.0, gt=0, le=600, description="longest wait for a file to settle")
    # Where the kernel reports a save's end (inotify), the wait after it for a second write.
    settle_guard: float = Field(
        0.01, ge=0, le=60, description="wait after a save the kernel reports complete"
    )
    # The daemon keeps a document's CLI running between turns (0: a new process every turn).
    warm_sessions: int = Field(4, ge=0, le=64, description="most warm CLI processes at once")
    max_concurrent_turns: int = Field(
        4, ge=1, le=256, description="turns the daemon runs at once; later prompts wait in order"
    )
    warm_idle: float = Field(600.0, gt=0, le=DAY, description="close a warm CLI idle this long")
    approval_timeout: float = Field(
        1800.0, gt=0, le=7 * DAY, description="deny a permission request unanswered this long"
    )
    # What a prompt's `@path` lines and pictures may bring in (PRODUCT.md §9).
    include_file_limit: int = Field(256 * 1024, ge=1, description="bytes of one included file")
    include_prompt_limit: int = Field(
        1024 * 1024, ge=1, description="bytes of all files one prompt includes"
    )
    image_limit: int = Field(5 * 1024 * 1024, ge=1, description="bytes of one picture")
    # The footer suggests a fresh start once the context window is this full (1: never).
    context_hint: float = Field(0.8, gt=0, le=1, description="share of the context window")
    # Folders kept in step with other machines by a tool agentdoc cannot see from a marker
    # (a sync tool's own marker, e.g. Syncthing's `.stfolder`, is found without this).
    synced: tuple[str, ...] = ()
    # In a synced folder a streaming reply is written at most this often, so a sync tool
    # publishes it in few versions and a phone's save rarely meets one of them.
    sync_flush_interval: float = Field(
        5.0, gt=0, le=600, description="seconds between streamed writes in a synced folder"
    )
    # Commit each session document to git after every completed turn ("commit"); also pull
    # before and push after each turn, and fetch in the background ("sync").
    git: Literal["off", "commit", "sync"] = "off"
    git_sync_interval: float = Field(30.0, gt=0, le=DAY, description="seconds between fetches")
    # Safety-relevant: only from the user's own config or command line.
    permission_mode: PermissionMode | None = None
    allowed_tools: tuple[str, ...] = ()
    add_dirs: tuple[str, ...] = ()
    allow_cwd_outside: bool = False  # let a document's `cwd` leave its folder tree
    # The agent for documents that name none, and the agents a document may name (besides the
    # built-in claude, gemini, codex and opencode, which entries here override).
    agent: str = "claude"
    agents: dict[str, AgentConfig] = Field(default_factory=dict)
    # Synced folders whose prompts this machine answers (`agentdoc trust`): only ever from the
    # user's own config, since anyone who can write into a synced folder could else spend the
    # agent here.
    trusted: tuple[str, ...] = ()
    # Whether agents started in a synced or `git: sync` folder this machine trusts read that
    # folder's own agent settings (Claude Code's `.claude/settings.json` hooks run commands as
    # this user). An untrusted one's are never read, not even for `agentdoc run`; off: not even
    # a trusted one's.
    folder_agent_settings: bool = True
    # Turns the daemon starts for one document in any hour (0: no cap).
    max_turns_per_hour: int = Field(30, ge=0, le=100_000, description="turns per document per hour")
    # In a synced folder, how long a machine that claims a new document waits for another
    # machine's claim to arrive through the sync before answering (longer than the sync's delay).
    claim_wait: float = Field(10.0, ge=0, le=600, description="seconds a new claim waits")
    # A command run when a reply ends, fails, waits for an approval or a prompt is held.
    notify: tuple[str, ...] = ()
    # `agentdoc watch` also serves the web page on this address (as `--serve ADDR` does).
    serve: str | None = None

    @field_validator("claude")
    @classmethod
    def _a_program(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must name the claude executable, not be empty")
        return value

    @field_validator("agent")
    @classmethod
    def _an_agent_name(cls, value: str) -> str:
        return _agent_name(value)

    @field_validator("agents")
    @classmethod
    def _agent_names(cls, value: dict[str, AgentConfig]) -> dict[str, AgentConfig]:
        for name in value:
            _agent_name(name)
        return value

    @field_validator("notify")
    @classmethod
    def _a_command(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if value and not value[0].strip():
            raise ValueError("must start with the program to run, not an empty string")
        return value

    @field_validator("submit_marker")
    @classmethod
    def _a_marker(cls, value: str) -> str:
        # An empty marker would match every prompt's last line; one with a line break, none.
        if not value.strip():
            raise ValueError("must be a visible word such as /send, not empty or blank")
        if "\n" in value or "\r" in value or value != value.strip():
            raise ValueError("must be one line without leading or trailing spaces")
        return value


def _agent_name(value: str) -> str:
    if not AGENT_NAME.fullmatch(value):
        raise ValueError(
            f"{value!r} is not an agent name (letters, digits and . _ -, not starting with -)"
        )
    return value


def config_path() -> Path:
    env = os.environ.get("AGENTDOC_CONFIG")
    if env:
        return Path(env)
    return platformdirs.user_config_path("agentdoc") / "config.toml"


def _env_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if environ.get("AGENTDOC_CLAUDE"):
        out["claude"] = environ["AGENTDOC_CLAUDE"]
    return out


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    *,
    path: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Merge config file, environment and explicit overrides (None values are ignored)."""
    path = path or config_path()
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise AgentdocError(f"cannot read config file {path}: {exc}") from exc
    data.update(_env_overrides(os.environ if environ is None else environ))
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(p) for p in e['loc'])}` {allowed(e['type'], e.get('ctx'), e['msg'])}"
            for e in exc.errors()
        )
        raise AgentdocError(f"invalid settings (from {path} or options): {problems}") from exc
