"""What `agentdoc doctor` asks an agent: is it ready to answer here? Each protocol says what
that takes (a program of a tested release and a login, or a handshake and a session), as lines
of the report; `doctor` only gathers and prints them.

Every check returns its findings and never raises, so one broken agent still lets the others
report. A probe that starts the agent in a folder does so in a scratch folder of its own, with
`Clearance.scratch`: the agent reads no one's settings there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

Outcome = Literal["ok", "warn", "fail"]


class Check(BaseModel):
    """One line of the report: what was checked, how it went, and how to fix it."""

    name: str
    outcome: Outcome
    detail: str
    fix: str | None = None


@dataclass(frozen=True)
class Probe:
    """One agent as `doctor` finds it configured, and how far to go checking it."""

    name: str  # its name in documents and the config
    command: tuple[str, ...]  # its entry's command
    env: Mapping[str, str]  # what its entry adds to the environment
    environ: Mapping[str, str]  # the environment agentdoc runs in
    home: Path  # the user's home folder (where agents keep their logins)
    default: bool  # documents that name no agent get it; else it matters only when named
    policy: str | None  # the permission_mode its sessions run under
    timeout: float  # seconds a start, a handshake or a session may take
    install: str  # how to install it, or to point agentdoc at it


# The checks an agent's protocol runs for one configured agent, in the order they print.
Checker = Callable[[Probe], list[Check]]
