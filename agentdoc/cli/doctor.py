"""`agentdoc doctor`: is this machine ready to run turns? One check per line, each with a fix.

Every check is a function that returns a `Check` and never raises, so one broken thing (a
config that does not parse, a CLI that hangs) still lets the others report.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from agentdoc.agents import Check, Outcome, agent_checks, builtin_agents, folder_files, known_agents
from agentdoc.config import Settings, config_path, load_settings
from agentdoc.daemon import synced_root
from agentdoc.document import shown_name
from agentdoc.errors import AgentdocError

# Starting an agent loads a large program (some take seconds to answer a handshake).
HANDSHAKE_TIMEOUT = 30.0
INOTIFY_WATCHES = Path("/proc/sys/fs/inotify/max_user_watches")


class Report(BaseModel):
    ok: bool
    checks: list[Check]


def run_checks(
    folder: Path,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    handshake_timeout: float = HANDSHAKE_TIMEOUT,
) -> Report:
    env = os.environ if environ is None else environ
    settings = _settings(env)
    checks = [_platform(), _config(env)]
    checks += _agents(settings, env, home or Path.home(), handshake_timeout)
    checks.append(_watch_limit(folder))
    checks.append(_shared_agent_files(folder, settings or Settings()))
    return Report(ok=all(c.outcome != "fail" for c in checks), checks=checks)


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


def _agents(
    settings: Settings | None, env: Mapping[str, str], home: Path, timeout: float
) -> list[Check]:
    """One line naming the agents documents may use, then each agent's own checks (run side
    by side: a handshake takes seconds)."""
    listed: list[Check] = []
    agents = {}
    if settings is None:
        settings = _defaults(env)  # the config check says why the file is not used
    else:
        try:
            agents = known_agents(settings)
        except AgentdocError as exc:
            listed.append(
                Check(name="agents", outcome="fail", detail=str(exc), fix="fix your config")
            )
        else:
            names = [f"{name} (default)" if name == settings.agent else name for name in agents]
            listed.append(Check(name="agents", outcome="ok", detail=", ".join(names)))
    if settings is None:
        return listed
    if not agents:
        # Without a usable config, documents get the built-in default agent: still checked.
        agents = {n: a for n, a in builtin_agents(settings).items() if n == settings.agent}
    used = settings
    with ThreadPoolExecutor(max_workers=max(1, len(agents))) as pool:
        found = pool.map(lambda spec: agent_checks(spec, used, env, home, timeout), agents.values())
        return [*listed, *(check for checks in found for check in checks)]


def _defaults(env: Mapping[str, str]) -> Settings | None:
    """The settings without the config file: its defaults and the environment's overrides."""
    try:
        return load_settings(path=Path(os.devnull), environ=env)
    except AgentdocError:
        return None


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


def _without_them(settings: Settings) -> str:
    """Which agents start in such a folder without its settings: those that can be made to."""
    try:
        agents = known_agents(settings).values()
    except AgentdocError:
        agents = builtin_agents(settings).values()
    able = sorted({a.title for a in agents if a.agent.can.skips_folder_settings})
    if not able:
        return "agents read them all the same"
    verb = "starts" if len(able) == 1 else "start"
    return f"{', '.join(able)} {verb} there without them; other agents read them all the same"


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
        else f"{_without_them(settings)} (folder_agent_settings = false)"
    )
    return Check(
        name=name,
        outcome="warn",
        detail="; ".join(lines) + f" — {used}",
        fix="read them before `agentdoc trust`: anyone who can write into the folder wrote them",
    )
