"""`agentdoc doctor`'s question to each configured agent, put to its protocol's `Agent`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentdoc.agents.base.checks import Check, Probe
from agentdoc.agents.registry import AgentSpec, package_of
from agentdoc.config import Settings


def agent_checks(
    spec: AgentSpec,
    settings: Settings,
    environ: Mapping[str, str],
    home: Path,
    timeout: float,
) -> list[Check]:
    """The lines of `doctor`'s report about one agent, in order; never raises for what it
    finds (a missing program, an agent that does not answer are lines of the report)."""
    probe = Probe(
        name=spec.name,
        command=spec.command,
        env=spec.env,
        environ=environ,
        home=home,
        default=spec.name == settings.agent,
        policy=spec.permission_mode or settings.permission_mode,
        timeout=timeout,
        install=_install(spec),
    )
    return spec.agent.check(probe)


def _install(spec: AgentSpec) -> str:
    package = package_of(spec)
    where = f"set `command` under [agents.{spec.name}] in your agentdoc config"
    return f"npm install -g {package}, or {where}" if package else where
