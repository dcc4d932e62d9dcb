"""`agentdoc doctor`'s checks of the Claude Code CLI: found, runs, a tested release, logged in.

The CLI is only asked `--version` (no session, in no folder); its login is looked for where the
CLI keeps it, naming where it is and never what it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from agentdoc.agents.base.checks import Check, Probe
from agentdoc.agents.claude.process import resolve_executable
from agentdoc.agents.claude.version import Version, dotted, parse_version, run_version
from agentdoc.errors import AgentdocError

# The releases agentdoc is tested with: the suite runs against the pinned 2.1.197, and the
# end-to-end tests against 2.1.332 (docs/platforms.md lists the differences found there;
# `make e2e CLAUDE_VERSION=…` checks another release).
TESTED_MIN = (2, 1, 197)
TESTED_MAX = (2, 1, 332)
VERSION_TIMEOUT = 20.0
NPM_PACKAGE = "@anthropic-ai/claude-code"
PROGRAM = "claude"
PROGRAM_ENV = "AGENTDOC_CLAUDE"
LOGIN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")


def tested_range() -> str:
    low, high = dotted(TESTED_MIN), dotted(TESTED_MAX)
    return low if low == high else f"{low} to {high}"


def check(probe: Probe) -> list[Check]:
    found, executable = _found(probe.command[0], probe.environ)
    checks = [found]
    if executable is not None:
        checks += _runs(executable, probe.environ)
    checks.append(_authentication(probe.environ, probe.home))
    if not probe.default:
        # Another agent answers documents that name none: this one matters only to a
        # document that names it.
        checks = [_only_if_named(one, probe.name) for one in checks]
    return checks


def _only_if_named(check: Check, name: str) -> Check:
    if check.outcome != "fail":
        return check
    when = f"only documents that say `agent: {name}` need it"
    fix = f"{when}; {check.fix}" if check.fix else when
    return check.model_copy(update={"outcome": "warn", "fix": fix})


def _found(name: str, env: Mapping[str, str]) -> tuple[Check, str | None]:
    """The CLI the runner would start (AGENTDOC_CLAUDE, else the config's `claude`, else PATH)."""
    source = (
        PROGRAM_ENV
        if env.get(PROGRAM_ENV)
        else f"config key `{PROGRAM}`"
        if name != PROGRAM
        else "PATH"
    )
    try:
        found = resolve_executable(name) if os.sep in name else _which(name, env)
    except AgentdocError as exc:
        return Check(
            name="claude CLI",
            outcome="fail",
            detail=str(exc),
            fix=f"npm install -g {NPM_PACKAGE}@{dotted(TESTED_MAX)}, or set "
            f"{PROGRAM_ENV} (or `{PROGRAM}` in the config) to its path",
        ), None
    return Check(name="claude CLI", outcome="ok", detail=f"{found} (from {source})"), found


def _which(name: str, env: Mapping[str, str]) -> str:
    found = shutil.which(name, path=env.get("PATH", os.defpath))
    return found if found is not None else resolve_executable(name)  # it says how to install


def _runs(executable: str, env: Mapping[str, str]) -> Iterator[Check]:
    reinstall = f"reinstall it: npm install -g {NPM_PACKAGE}"
    try:
        done = run_version(executable, env, VERSION_TIMEOUT)
    except subprocess.TimeoutExpired:
        yield Check(
            name="claude runs",
            outcome="fail",
            detail=f"`claude --version` did not finish within {VERSION_TIMEOUT:.0f} s",
            fix="run `claude --version` yourself to see what it waits for",
        )
        return
    except OSError as exc:
        detail = f"cannot run {executable}: {exc}"
        yield Check(name="claude runs", outcome="fail", detail=detail, fix=reinstall)
        return
    version = parse_version(done.stdout)
    if done.returncode != 0 or version is None:
        output = (done.stderr or done.stdout).strip() or "no output"
        detail = f"`claude --version` exited with {done.returncode}: {output}"
        yield Check(name="claude runs", outcome="fail", detail=detail, fix=reinstall)
        return
    yield Check(name="claude runs", outcome="ok", detail=f"claude --version: {dotted(version)}")
    yield _version_range(version)


def _version_range(version: Version) -> Check:
    shown = dotted(version)
    pin = f"npm install -g {NPM_PACKAGE}@{dotted(TESTED_MAX)}"
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
    for variable in LOGIN_ENV:
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
