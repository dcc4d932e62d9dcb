"""What an ACP agent lets a session be set to, and whether it can open one at all (a login):
for `agentdoc doctor`. ACP lists modes and options only in a session's answer, so this opens a
session in a scratch folder (removed after) and closes it, sending no prompt. What it offered
is remembered (`base.offers`) for `agentdoc status`, which never starts an agent.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

from agentdoc.agents.acp.launch import agent_env
from agentdoc.agents.acp.options import (
    DEFAULT_POLICY,
    POLICY_STANCES,
    Stance,
    choose,
    offered,
    stance_of,
    stances,
)
from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.quirks import policy_env
from agentdoc.agents.acp.sessions import Refused
from agentdoc.agents.base.agent import Environ, Known
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.offers import Offer, recall, remember

# Seconds to wait for an agent that pushes its login to tell it (claude-agent-acp bounds its
# own probe by 5 s): deciding sooner would take "not told yet" for "logged in".
LOGIN_WAIT = 6.0


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
            session_timeout=timeout, clearance=Clearance.scratch(Path(scratch)),
        )  # fmt: skip
        try:
            opened = process.start().open_session(None)
            process.wait_for_login(LOGIN_WAIT)
            if process.logged_out:
                # The agent opens sessions without a login and says so aside (its first
                # prompt would fail): not ready, whatever the session looks like.
                raise process.not_logged_in(process.logged_out)
            if process.can_close:
                # The session ends with the process anyway where the agent refuses.
                with contextlib.suppress(Refused):
                    process.close_session(opened.session_id)
        finally:
            process.close(2.0)
    result = opened.result
    if result is None:
        return Offer({}, None)
    meanings = stances(result)
    choice = choose(name, policy or DEFAULT_POLICY, meanings)
    note = None if by_env else choice.refusal or choice.note
    offer = Offer(offered(result), note, stances=dict(meanings))
    remember(name, command, offer, environ)
    return offer


def known(name: str, command: Sequence[str], policy: str | None, environ: Environ) -> Known:
    """The policy's mode and what the agent offered when a session last opened on this
    machine (a turn's, or `agentdoc doctor`'s); never starts the agent."""
    wanted = policy or DEFAULT_POLICY
    by_env = policy_env(command, wanted)
    found = recall(name, command, environ)
    if found is None:
        mode = f"set in its environment ({', '.join(by_env)})" if by_env else None
        return Known(mode, None, None, f"run `agentdoc doctor` to see what {name} offers")
    if by_env:
        mode = f"set in its environment ({', '.join(by_env)})"
        return Known(mode, found.offer.options, found.seen, None)
    choice = choose(name, wanted, _meanings(found.offer.stances, found.offer.options))
    if choice.refusal is not None:
        return Known("none: its turns wait", found.offer.options, found.seen, choice.refusal)
    return Known(choice.mode or "its own", found.offer.options, found.seen, choice.note)


def _meanings(remembered: Mapping[str, str], options: Mapping[str, list[str]]) -> dict[str, Stance]:
    """The stances of the modes remembered, in the order offered (a record from before they
    were remembered: each mode's id is all there is to read)."""
    known = set(POLICY_STANCES.values()) | {"other"}
    found: dict[str, Stance] = {}
    for mode in options.get("mode", []):
        said = remembered.get(mode)
        found[mode] = cast(Stance, said) if said in known else stance_of(mode)
    return found
