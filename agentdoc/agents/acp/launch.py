"""Starting an ACP agent for a turn: one process per turn, or a warm one the daemon keeps.

The command and its environment come from the agent's entry in the user's config (the face
resolves the name a document gives); nothing of the document reaches the argv. A warm process
is reused for a document's next turn when the command, cwd and environment are the same (the
key) and the process is in the session the turn continues, having run the turn before it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents.acp.options import DEFAULT_POLICY
from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.quirks import policy_env
from agentdoc.agents.acp.turn import AcpTurn
from agentdoc.agents.base import AgentRequest, ImagePart, TurnEnd, WarmHandle, child_env


def agent_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment passes through; the agent's config entry adds to it."""
    return child_env(base, extra)


def turn_args(request: AgentRequest) -> dict[str, Any]:
    """What a request asks of an ACP turn. ACP agents choose their own session ids, so a
    Claude-style `session_id` for a new session is not used."""
    return {
        "prompt": request.prompt,
        "session_id": request.resume,
        "fork": request.fork,
        "seeded_prompt": request.seeded_prompt,
        "turn": request.turn,
        "extra": tuple(image_block(image) for image in request.images),
        "model": request.model,
        "effort": request.effort,
    }


def image_block(image: ImagePart) -> dict[str, Any]:
    """A picture the prompt names, as ACP image content after the prompt's text."""
    return {"type": "image", "mimeType": image.media_type, "data": image.base64()}


class OneShotTurn(AcpTurn):
    """The turn of a process started for it alone: closing the turn ends the process."""

    def close(self, grace: float) -> TurnEnd | None:
        end = super().close(grace)
        self.process.close(grace)
        return end


def start(
    request: AgentRequest,
    command: Sequence[str],
    extra_env: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
    policy: str | None = None,
) -> AcpTurn:
    """A process for one turn; AgentCannotStart (document untouched) if it cannot begin.
    `policy`: the config's permission_mode, put to the agent as its mode."""
    env = agent_env(os.environ if environ is None else environ, extra_env)
    by_env = policy_env(command, policy or DEFAULT_POLICY)
    env.update(by_env)
    process = AcpProcess(
        list(command), request.cwd, env, name=request.agent, turn_type=OneShotTurn,
        policy=policy, policy_set=bool(by_env),
    )  # fmt: skip
    process.start()
    try:
        return process.begin(**turn_args(request))
    except BaseException:
        process.close(1.0)
        raise


class WarmAcp(WarmHandle):
    """A warm ACP agent as the daemon's pool sees it."""

    process: AcpProcess

    def reusable_for(self, request: AgentRequest) -> bool:
        # A model or effort the document changed is set when a session opens.
        return (
            super().reusable_for(request)
            and (
                request.model,
                request.effort,
            )
            == self.process.settled
        )

    def begin(self, request: AgentRequest) -> AcpTurn:
        # The pool holds its lock here: the handshake and the session open on the turn's thread.
        return self.process.begin(**turn_args(request), background=True)


@dataclass(frozen=True)
class WarmAcpStart:
    key: object
    command: tuple[str, ...]
    cwd: Path
    env: dict[str, str]
    name: str
    policy: str | None = None

    def start(self) -> WarmAcp:
        by_env = bool(policy_env(self.command, self.policy or DEFAULT_POLICY))
        process = AcpProcess(
            list(self.command), self.cwd, self.env, name=self.name, key=self.key,
            policy=self.policy, policy_set=by_env,
        )  # fmt: skip
        return WarmAcp(process.spawn())

    def start_ahead(self) -> WarmAcp | None:
        # Starting ahead would have to shake hands and load the session before the prompt, on
        # a thread of its own that the first turn then waits for; not done yet.
        return None


def warm(
    request: AgentRequest,
    command: Sequence[str],
    extra_env: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
    policy: str | None = None,
) -> WarmAcpStart:
    env = agent_env(os.environ if environ is None else environ, extra_env)
    env.update(policy_env(command, policy or DEFAULT_POLICY))
    key = ("acp", tuple(command), str(request.cwd), tuple(sorted(env.items())), policy)
    return WarmAcpStart(key, tuple(command), request.cwd, env, request.agent, policy)
