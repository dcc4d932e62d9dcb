"""One `Agent` per protocol: what its agents can do, as data, and the few things done its way.

Above ``agents/`` nothing asks which protocol a document's agent speaks; it asks the agent's
`Agent` instead (can it choose a session id, does it keep sessions agentdoc can look up, can a
turn be branched or rewound). A protocol package fills one in; the face keeps the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from agentdoc.agents.base.checks import Checker
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.failure import Failure
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.base.process import AgentTurn, WarmStart
from agentdoc.agents.base.request import AgentRequest
from agentdoc.config import Settings

Environ = Mapping[str, str] | None


@dataclass(frozen=True)
class Capabilities:
    """What every agent of a protocol can do (what one agent advertised is the process's)."""

    chooses_session_id: bool = False  # agentdoc names a new session (else the agent does)
    resumes_at: bool = False  # continues a copy of a session that ends at a chosen turn
    forks: bool = False  # continues a copy of a session, leaving the original as it was
    rewinds_files: bool = False  # puts back the files a turn's tools changed
    permission_modes: tuple[str, ...] = ()  # the modes agentdoc may start it in
    # Its permission requests are agentdoc's own allow / always allow / deny (the standard
    # block), rather than options of its own shown one box each.
    standard_approval: bool = False
    # Its answer to a permission request carries the person's words (a deny reason); else they
    # open the next prompt of the session (AgentRequest.said_before).
    answer_has_reason: bool = False
    # It can be started without reading its working folder's own settings (hooks, servers):
    # what `folder_agent_settings = false` and an untrusted shared folder rely on.
    skips_folder_settings: bool = False


class SessionStore(Protocol):
    """An agent's sessions as files agentdoc can read (without starting the agent)."""

    @property
    def kept(self) -> str:
        """Where the agent keeps its sessions, for a person looking for a lost one."""
        ...

    def has_session(self, environ: Mapping[str, str], session: str, cwd: Path) -> bool | None:
        """Whether ``session`` exists for ``cwd`` (None: cannot tell)."""
        ...

    def last_reply_text(self, environ: Mapping[str, str], session: str, cwd: Path) -> str | None:
        """The session's own copy of its last reply (for an interrupted one)."""
        ...


class TurnHistory(Protocol):
    """Turns as points in the agent's session: to branch the session there or rewind to it."""

    def mark_turn(
        self,
        environ: Mapping[str, str],
        session: str,
        cwd: Path,
        prompt: str,
        since: datetime,
        message_id: str | None,
        branch: str | None,
    ) -> str | None:
        """The agent's id of the turn that just ended with ``prompt`` (None: not found);
        ``branch``: the copy of the session the agent made at the turn's end, if it did."""
        ...

    def branch_point(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[str, str] | None:
        """The session to fork to continue right after the marked turn, and the point in it
        where the copy ends (the session's own id: at its end); None when unknown."""
        ...

    def unrestorable(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[bool, list[str]] | None:
        """Whether the turn changed files, and why they cannot all be restored exactly."""
        ...

    def restore_files(
        self, settings: Settings, environ: Mapping[str, str], mark: TurnMark, clearance: Clearance
    ) -> None:
        """Put the files the marked turn's tools changed back as they were before it, running
        the agent in `clearance.cwd` (the turn's working folder, with the gate's leave)."""
        ...


@dataclass(frozen=True, slots=True)
class Known:
    """What agentdoc knows of an agent's session settings without starting it."""

    mode: str | None  # the user's permission_mode as the agent's own mode (None: unknown)
    offered: dict[str, list[str]] | None  # what its sessions can be set to (None: unknown)
    seen: str | None = None  # when the agent said so (None: known without asking it)
    note: str | None = None  # what the person should know, or where to look


# What agentdoc knows of an agent's settings without starting it: from its name, command, the
# user's permission_mode and the environment (where this machine keeps what agents said).
KnownOptions = Callable[[str, Sequence[str], str | None, Environ], Known]
# How a protocol starts an agent: the request, the command and added environment from the
# agent's entry, the settings and the environment to start from.
Starter = Callable[[AgentRequest, Sequence[str], Mapping[str, str], Settings, Environ], AgentTurn]
Warmer = Callable[[AgentRequest, Sequence[str], Mapping[str, str], Settings, Environ], WarmStart]


@dataclass(frozen=True)
class Agent:
    """A protocol as the rest of agentdoc sees it."""

    protocol: str
    can: Capabilities
    start: Starter  # a process for one turn
    warm: Warmer  # a warm process, keyed but not started
    find_program: Callable[[Sequence[str], Mapping[str, str]], str]  # AgentdocError if missing
    classify: Callable[[str], Failure | None]  # an error text → its kind and advice
    recognises: Callable[[bytes], bool]  # whether a /proc cmdline is one of its processes
    known: KnownOptions  # its session settings as far as known without starting it
    check: Checker  # doctor's checks: is one of its agents ready to answer here?
    sessions: SessionStore | None = None
    history: TurnHistory | None = None
