"""`agentdoc doctor`: is this machine ready to run turns? One check per line, each with a fix.

Every check is a function that returns a `Check` and never raises, so one broken thing (a
config that does not parse, a CLI that hangs) still lets the others report.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from agentdoc.agents import (
    LEGACY_AGENT,
    AgentSpec,
    agent_named,
    find_program,
    folder_files,
    handshake,
    inspect_agent,
    known_agents,
    package_of,
)
from agentdoc.config import Settings, config_path, load_settings
from agentdoc.daemon import synced_root
from agentdoc.document import shown_name
from agentdoc.errors import AgentdocError, NotLoggedIn

# The Claude Code releases agentdoc is tested with: the suite runs against the pinned 2.1.197,
# and the end-to-end tests against 2.1.332 (docs/platforms.md lists the differences found there;
# `make e2e CLAUDE_VERSION=…` checks another release).
TESTED_MIN = (2, 1, 197)
TESTED_MAX = (2, 1, 332)
VERSION_TIMEOUT = 20.0
# Starting an agent loads a large program (Gemini CLI and OpenCode take seconds to answer).
HANDSHAKE_TIMEOUT = 30.0
INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")
NPM_PACKAGE = "@anthropic-ai/claude-code"

Outcome = Literal["ok", "warn", "fail"]


class Check(BaseModel):
    name: str
    outcome: Outcome
    detail: str
    fix: str | None = None


class Report(BaseModel):
    ok: bool
    checks: list[Check]


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def tested_range() -> str:
    low, high = _dotted(TESTED_MIN), _dotted(TESTED_MAX)
    return low if low == high else f"{low} to {high}"


def parse_version(output: str) -> tuple[int, ...] | None:
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", output)
    return tuple(int(g) for g in found.groups()) if found else None


def run_checks(
    folder: Path,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
) -> Report:
    env = os.environ if environ is None else environ
    found, executable = _claude_found(env)
    claude = [found]
    if executable is not None:
        claude += _claude_runs(executable, env)
    claude.append(_authentication(env, home or Path.home()))
    settings = _settings(env)
    if settings is not None and settings.agent != LEGACY_AGENT:
        # Another agent answers documents that name none: Claude matters only to a document
        # that names it, as any agent but the default does.
        claude = [_only_if_named(check) for check in claude]
    checks = [_platform(), _config(env), *claude]
    checks += _agents(env, handshake_timeout)
    checks.append(_watch_limit(folder))
    checks.append(_shared_agent_files(folder, _settings(env) or Settings()))
    return Report(ok=all(c.outcome != "fail" for c in checks), checks=checks)


def _only_if_named(check: Check) -> Check:
    if check.outcome != "fail":
        return check
    when = f"only documents that say `agent: {LEGACY_AGENT}` need it"
    fix = f"{when}; {check.fix}" if check.fix else when
    return check.model_copy(update={"outcome": "warn", "fix": fix})


def _platform() -> Check:
    detail = f"Python {platform.python_version()} on {platform.system()} {platform.machine()}"
    if sys.platform == "win32":
        return Check(
            name="platform",
            outcome="fail",
            detail=detail,
            fix="agentdoc needs Linux or macOS; on Windows, run it inside WSL",
        )
    return Check(name="platform", outcome="ok", detail=detail)


def _settings(env: Mapping[str, str]) -> Settings | None:
    try:
        return load_settings(environ=env)
    except AgentdocError:
        return None


def _config(env: Mapping[str, str]) -> Check:
    path = Path(env["AGENTDOC_CONFIG"]) if env.get("AGENTDOC_CONFIG") else config_path()
    try:
        load_settings(path=path, environ=env)
    except AgentdocError as exc:
        return Check(name="config", outcome="fail", detail=str(exc), fix=f"fix or remove {path}")
    state = "parsed" if path.is_file() else "not present, defaults used"
    return Check(name="config", outcome="ok", detail=f"{path} ({state})")


def _claude_found(env: Mapping[str, str]) -> tuple[Check, str | None]:
    """The CLI the runner would start (AGENTDOC_CLAUDE, else the config's `claude`, else PATH)."""
    settings = _settings(env)
    name = settings.claude if settings is not None else env.get("AGENTDOC_CLAUDE", "claude")
    source = (
        "AGENTDOC_CLAUDE"
        if env.get("AGENTDOC_CLAUDE")
        else "config key `claude`"
        if name != "claude"
        else "PATH"
    )
    try:
        found = _resolve(name, env) if os.sep in name else _which(name, env)
    except AgentdocError as exc:
        return Check(
            name="claude CLI",
            outcome="fail",
            detail=str(exc),
            fix=f"npm install -g {NPM_PACKAGE}@{_dotted(TESTED_MAX)}, or set "
            "AGENTDOC_CLAUDE (or `claude` in the config) to its path",
        ), None
    return Check(name="claude CLI", outcome="ok", detail=f"{found} (from {source})"), found


def _which(name: str, env: Mapping[str, str]) -> str:
    import shutil

    found = shutil.which(name, path=env.get("PATH", os.defpath))
    return found if found is not None else _resolve(name, env)


def _resolve(name: str, env: Mapping[str, str]) -> str:
    """The Claude CLI at ``name``; its messages say how to install it."""
    return agent_named(LEGACY_AGENT).find_program((name,), env)


def _claude_runs(executable: str, env: Mapping[str, str]) -> Iterator[Check]:
    try:
        done = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        yield Check(
            name="claude runs",
            outcome="fail",
            detail=f"`claude --version` did not finish within {VERSION_TIMEOUT:.0f} s",
            fix="run `claude --version` yourself to see what it waits for",
        )
        return
    except OSError as exc:
        yield Check(
            name="claude runs",
            outcome="fail",
            detail=f"cannot run {executable}: {exc}",
            fix=f"reinstall it: npm install -g {NPM_PACKAGE}",
        )
        return
    version = parse_version(done.stdout)
    if done.returncode != 0 or version is None:
        output = (done.stderr or done.stdout).strip() or "no output"
        yield Check(
            name="claude runs",
            outcome="fail",
            detail=f"`claude --version` exited with {done.returncode}: {output}",
            fix=f"reinstall it: npm install -g {NPM_PACKAGE}",
        )
        return
    yield Check(name="claude runs", outcome="ok", detail=f"claude --version: {_dotted(version)}")
    yield _version_range(version)


def _version_range(version: tuple[int, ...]) -> Check:
    shown = _dotted(version)
    pin = f"npm install -g {NPM_PACKAGE}@{_dotted(TESTED_MAX)}"
    if version < TESTED_MIN:
        return Check(
            name="claude version",
            outcome="fail",
            detail=f"{shown} is older than the versions agentdoc is tested with ({tested_range()})",
            fix=pin,
        )
    if version > TESTED_MAX:
        return Check(
            name="claude version",
            outcome="warn",
            detail=f"{shown} is newer than the versions agentdoc is tested with "
            f"({tested_range()}); it will probably work",
            fix=f"if replies go wrong, {pin}",
        )
    return Check(name="claude version", outcome="ok", detail=f"tested with {tested_range()}")


def _authentication(env: Mapping[str, str], home: Path) -> Check:
    """Whether the CLI has credentials; names where they are, never what they are."""
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        if env.get(variable):
            return Check(name="authentication", outcome="ok", detail=f"{variable} is set")
    config_dir = (
        Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"
    )
    credentials = config_dir / ".credentials.json"
    if credentials.is_file():
        return Check(name="authentication", outcome="ok", detail=f"Claude login in {credentials}")
    if sys.platform == "darwin" and (home / ".claude.json").is_file():
        # On macOS the CLI keeps its login in the Keychain, which we do not read.
        return Check(
            name="authentication",
            outcome="warn",
            detail="no API key set; a Claude login may be in the macOS Keychain",
            fix="if replies fail with 401, run `claude` once and log in",
        )
    return Check(
        name="authentication",
        outcome="fail",
        detail=f"no ANTHROPIC_API_KEY and no Claude login ({credentials} is missing)",
        fix="run `claude` once and log in (`/login`), or set ANTHROPIC_API_KEY",
    )


def _agents(env: Mapping[str, str], timeout: float) -> list[Check]:
    """One line naming the agents documents may use, then one per ACP agent: found, its
    version and capabilities from the `initialize` handshake (run side by side: each takes
    seconds)."""
    settings = _settings(env)
    if settings is None:
        return []  # the config check already says why
    try:
        agents = known_agents(settings)
    except AgentdocError as exc:
        return [Check(name="agents", outcome="fail", detail=str(exc), fix="fix your config")]
    names = [f"{name} (default)" if name == settings.agent else name for name in agents]
    listed = Check(name="agents", outcome="ok", detail=", ".join(names))
    acp = [agent for agent in agents.values() if agent.protocol == "acp"]
    policy = settings.permission_mode
    with ThreadPoolExecutor(max_workers=max(1, len(acp))) as pool:
        checks = pool.map(
            lambda agent: _agent(agent, agent.name == settings.agent, env, timeout, policy),
            acp,
        )
        return [listed, *checks]


def _agent(
    agent: AgentSpec,
    default: bool,
    env: Mapping[str, str],
    timeout: float,
    policy: str | None = None,
) -> Check:
    name = f"agent {agent.name}"
    try:
        program = find_program(agent, env)
    except AgentdocError as exc:
        # Only a problem if a document uses it: the default agent, or one a document names.
        return Check(
            name=name, outcome="fail" if default else "warn", detail=str(exc), fix=_install(agent)
        )
    try:
        info = handshake(agent, env, timeout)
    except AgentdocError as exc:
        shown = " ".join(agent.command)
        return Check(
            name=name,
            outcome="fail",
            detail=f"{program}: {exc}",
            fix=f"run `{shown}` yourself to see what it says; {_install(agent)}",
        )
    found = f"{program}: {info.describe()}"
    try:
        offer = inspect_agent(agent, env, policy, timeout)
    except AgentdocError as exc:
        # The handshake needs no account; a session does: this is where a login shows. Any
        # other reason (a session that never opens, an error) is not fixed by logging in.
        shown = " ".join(agent.command)
        fix = (
            f"run `{shown}` yourself and log in, or set its API key in [agents.{agent.name}.env]"
            if isinstance(exc, NotLoggedIn)
            else f"run `{shown}` yourself to see what it waits for or says"
        )
        return Check(
            name=name,
            outcome="fail" if default else "warn",
            detail=f"{found}; {_session_refused(exc)}",
            fix=fix,
        )
    if offer is None:
        return Check(name=name, outcome="ok", detail=found)
    found += f"; sessions take {offer.describe()}"
    if offer.policy_note:
        # Not silently trusted: the person learns the agent may act without asking.
        return Check(
            name=name,
            outcome="warn",
            detail=f"{found}; {offer.policy_note}",
            fix=f"give [agents.{agent.name}] a permission_mode it has a mode for in your "
            "agentdoc config, or use another agent",
        )
    return Check(name=name, outcome="ok", detail=found)


def _session_refused(exc: AgentdocError) -> str:
    if not isinstance(exc, NotLoggedIn):
        return f"cannot open a session: {exc}"
    said = "" if exc.said.casefold() == "not logged in" else f" ({exc.said})"
    ways = f" (it offers: {', '.join(exc.methods)})" if exc.methods else ""
    return f"not logged in{said}{ways}"


def _install(agent: AgentSpec) -> str:
    package = package_of(agent)
    where = f"set `command` under [agents.{agent.name}] in your agentdoc config"
    return f"npm install -g {package}, or {where}" if package else where


def _watch_limit(folder: Path, limit_file: Path = INOTIFY_WATCHES) -> Check:
    if not limit_file.is_file():
        return Check(
            name="watch limit",
            outcome="ok",
            detail=f"no inotify limit to check on {platform.system()}",
        )
    try:
        limit = int(limit_file.read_text().strip())
    except (OSError, ValueError) as exc:
        return Check(name="watch limit", outcome="warn", detail=f"cannot read {limit_file}: {exc}")
    folders = count_folders(folder)
    detail = f"{folders} folders under {folder}, inotify allows {limit} watches"
    if folders >= limit:
        return Check(
            name="watch limit",
            outcome="fail",
            detail=detail,
            fix="raise it: `sudo sysctl fs.inotify.max_user_watches=524288` (and in "
            "/etc/sysctl.d/ to keep it), watch a smaller folder, or use `agentdoc watch --poll`",
        )
    return Check(name="watch limit", outcome="ok", detail=detail)


def count_folders(root: Path) -> int:
    """The folders a recursive watch on `root` needs (itself included)."""
    count = 0
    for _here, _dirs, _files in os.walk(root, onerror=lambda _exc: None):
        count += 1
    return count


SYMBOLS: dict[Outcome, str] = {"ok": "✓", "warn": "!", "fail": "✗"}


def render(report: Report, echo: Callable[[str], None]) -> None:
    for check in report.checks:
        line = f"{SYMBOLS[check.outcome]} {check.name}: {check.detail}"
        echo(line)
        if check.fix and check.outcome != "ok":
            echo(f"    fix: {check.fix}")


def _shared_agent_files(folder: Path, settings: Settings) -> Check:
    """The agents' own settings and instructions found in synced folders under `folder`: a
    paired device put them there as much as you did (docs/security.md)."""
    name = "agent files in synced folders"
    shared = [f for f in folder_files(folder) if synced_root(f.folder, settings) is not None]
    if not shared:
        return Check(name=name, outcome="ok", detail=f"none under {folder}")
    lines = [
        f"{shown_name(str(f.path))}: {f.what}" + (f"; {f.problem}" if f.problem else "")
        for f in shared
    ]
    used = (
        "agents read them once you trust the folder (`agentdoc trust`)"
        if settings.folder_agent_settings
        else "Claude Code starts there without them (folder_agent_settings = false)"
    )
    return Check(
        name=name,
        outcome="warn",
        detail="; ".join(lines) + f" — {used}",
        fix="read them before `agentdoc trust`: anyone who can write into the folder wrote them",
    )
