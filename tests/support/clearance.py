"""The gate's leave for the turns a test runs itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdoc.config import Settings


def own_leave(cwd: Path, doc: Any) -> Any:
    """The gate's leave for a turn a test runs itself: what `agentdoc run` gets (the user's own
    command), so a test's turn starts its agent as the CLI's would."""
    from agentdoc.daemon import own_command

    return own_command(cwd, Settings())(cwd, doc)


def leave_for(cwd: Path | str) -> Any:
    """Leave to start an agent in a test's own folder, for a request a test builds itself."""
    from agentdoc.agents import Clearance

    return Clearance.scratch(Path(cwd))
