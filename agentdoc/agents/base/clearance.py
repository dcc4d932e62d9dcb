"""Leave to start an agent in one folder: no agent process starts without one.

An agent started in a folder runs with this machine's user and credentials, and most agents
read that folder's own settings as they start (Claude Code runs `.claude/settings.json` hooks
before any prompt). So whether an agent may start is decided before its process exists, not
when a prompt is sent: every spawn in this package takes a `Clearance` for the exact working
folder it starts in and refuses without one. The only code that issues them is the daemon's
gate (`agentdoc/daemon/gate.py`), for the daemon's starts and for the user's own commands;
`tests/test_architecture.py` keeps it so, and `tests/test_start_paths.py` walks every way an
agent is started.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentdoc.errors import AgentdocError


class NotCleared(AgentdocError):
    """An agent was about to start without leave for its folder: a bug of ours, never sent."""


@dataclass(frozen=True)
class Clearance:
    """Leave to start an agent with `cwd` as its working folder.

    `folder_settings`: whether the agent may read that folder's own agent settings (hooks, MCP
    servers, permission rules). False in a folder others write into (a sync tool's, a `git:
    sync` repository) that this machine does not trust, as for the user's own `agentdoc run`
    there, or when the user's config keeps every shared folder's settings off.
    """

    cwd: Path
    folder_settings: bool
    why: str  # who gave leave, for the log: "your own command", "a trusted synced folder"

    @classmethod
    def scratch(cls, folder: Path) -> Clearance:
        """Leave for an empty folder agentdoc made itself (doctor's probes): nobody else's
        files are in it, so nothing there can be trusted or not."""
        return cls(folder, folder_settings=False, why="a scratch folder of agentdoc's own")


def cleared(clearance: Clearance | None, cwd: Path) -> Clearance:
    """The clearance, if it is leave for `cwd`; NotCleared otherwise."""
    if clearance is None:
        raise NotCleared(f"no agent may start in {cwd} without the gate's leave")
    if clearance.cwd.resolve() != Path(cwd).resolve():
        raise NotCleared(f"leave was given for {clearance.cwd}, not for {cwd}")
    return clearance
