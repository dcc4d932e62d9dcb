"""`agentdoc doctor`'s check of one ACP agent: its program found, `initialize` answered (in a
scratch folder), and a session opened and closed to learn its login and what it offers."""

from __future__ import annotations

from agentdoc.agents.acp.inspect import inspect
from agentdoc.agents.acp.probe import find_command, handshake
from agentdoc.agents.base.checks import Check, Probe
from agentdoc.errors import AgentdocError, NotLoggedIn


def check(probe: Probe) -> list[Check]:
    return [_check(probe)]


def _check(probe: Probe) -> Check:
    name = f"agent {probe.name}"
    # Only a problem if a document uses it: the default agent, or one a document names.
    unless_named = "fail" if probe.default else "warn"
    try:
        program = find_command(probe.command, probe.environ)
    except AgentdocError as exc:
        return Check(name=name, outcome=unless_named, detail=str(exc), fix=probe.install)
    shown = " ".join(probe.command)
    try:
        info = handshake(probe, probe.environ, probe.timeout)
    except AgentdocError as exc:
        return Check(
            name=name,
            outcome="fail",
            detail=f"{program}: {exc}",
            fix=f"run `{shown}` yourself to see what it says; {probe.install}",
        )
    found = f"{program}: {info.describe()}"
    try:
        offer = inspect(
            probe.name, probe.command, probe.env, probe.environ, probe.policy, probe.timeout
        )
    except AgentdocError as exc:
        # The handshake needs no account; a session does: this is where a login shows. Any
        # other reason (a session that never opens, an error) is not fixed by logging in.
        fix = (
            f"run `{shown}` yourself and log in, or set its API key in [agents.{probe.name}.env]"
            if isinstance(exc, NotLoggedIn)
            else f"run `{shown}` yourself to see what it waits for or says"
        )
        return Check(
            name=name, outcome=unless_named, detail=f"{found}; {_session_refused(exc)}", fix=fix
        )
    found += f"; sessions take {offer.describe()}"
    if offer.policy_note:
        # Not silently trusted: the person learns the agent may act without asking.
        return Check(
            name=name,
            outcome="warn",
            detail=f"{found}; {offer.policy_note}",
            fix=f"give [agents.{probe.name}] a permission_mode it has a mode for in your "
            "agentdoc config, or use another agent",
        )
    return Check(name=name, outcome="ok", detail=found)


def _session_refused(exc: AgentdocError) -> str:
    if not isinstance(exc, NotLoggedIn):
        return f"cannot open a session: {exc}"
    said = "" if exc.said.casefold() == "not logged in" else f" ({exc.said})"
    ways = f" (it offers: {', '.join(exc.methods)})" if exc.methods else ""
    return f"not logged in{said}{ways}"
