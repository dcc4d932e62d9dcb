"""What an ACP agent lets a session be set to, and whether it can open one at all (a login):
for `agentdoc doctor`. ACP lists modes and options only in a session's answer, so this opens a
session in a scratch folder (removed after) and closes it, sending no prompt.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents.acp.launch import agent_env
from agentdoc.agents.acp.options import DEFAULT_POLICY, mode_call, offered
from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.quirks import policy_env
from agentdoc.agents.acp.sessions import Refused


@dataclass(frozen=True, slots=True)
class Offer:
    options: dict[str, list[str]]  # what a session can be set to, by what it sets
    policy_note: str | None  # None: the agent has a mode for the user's permission_mode

    def describe(self) -> str:
        shown = "; ".join(f"{what}: {', '.join(values)}" for what, values in self.options.items())
        return shown or "no modes or options"


def inspect(
    name: str,
    command: Sequence[str],
    extra_env: Mapping[str, str],
    environ: Mapping[str, str],
    policy: str | None,
    timeout: float,
) -> Offer:
    """Open and close one session; AgentCannotStart says why not (a login it needs, …)."""
    with tempfile.TemporaryDirectory(prefix="agentdoc-doctor-") as scratch:
        env = agent_env(environ, extra_env)
        by_env = policy_env(command, policy or DEFAULT_POLICY)
        env.update(by_env)
        process = AcpProcess(
            list(command), Path(scratch), env, name=name, handshake_timeout=timeout,
            session_timeout=timeout,
        )  # fmt: skip
        try:
            opened = process.start().open_session(None)
            if process.can_close:
                # The session ends with the process anyway where the agent refuses.
                with contextlib.suppress(Refused):
                    process.close_session(opened.session_id)
        finally:
            process.close(2.0)
    result = opened.result
    if result is None:
        return Offer({}, None)
    note = mode_call(name, result, policy or DEFAULT_POLICY)
    return Offer(offered(result), note if isinstance(note, str) and not by_env else None)
