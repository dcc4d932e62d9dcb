"""Starting an ACP agent for a turn: one process per turn, or a warm one the daemon keeps.

The command and its environment come from the agent's entry in the user's config (the face
resolves the name a document gives); nothing of the document reaches the argv. A warm process
is reused for a document's next turn when the command, cwd and environment are the same (the
key) and the process is in the session the turn continues, having run the turn before it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents.acp.options import DEFAULT_POLICY
from agentdoc.agents.acp.process import AcpProcess
from agentdoc.agents.acp.quirks import log_env, policy_env
from agentdoc.agents.acp.sessions import SessionOpened
from agentdoc.agents.acp.turn import AcpTurn
from agentdoc.agents.base.child import child_env
from agentdoc.agents.base.events import TurnEnd
from agentdoc.agents.base.prompt import ImagePart
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.base.warm import WarmHandle
from agentdoc.errors import AgentCannotStart

log = logging.getLogger(__name__)


def agent_env(
    base: Mapping[str, str], extra: Mapping[str, str], command: Sequence[str] = ()
) -> dict[str, str]:
    """The environment passes through; the agent's config entry adds to it, and what agentdoc
    needs of the program (its log on stderr) fills what neither set."""
    return log_env(command) | child_env(base, extra)


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
        "said_before": request.said_before,
        "tools_after": request.tools_after,
        "cost_before": request.cost_before,
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
    env = agent_env(os.environ if environ is None else environ, extra_env, command)
    by_env = policy_env(command, policy or DEFAULT_POLICY)
    env.update(by_env)
    process = AcpProcess(
        list(command), request.cwd, env, name=request.agent, turn_type=OneShotTurn,
        policy=policy, policy_set=bool(by_env), clearance=request.clearance,
    )  # fmt: skip
    process.start()
    try:
        return process.begin(**turn_args(request))
    except BaseException:
        process.close(1.0)
        raise


class AheadProcess(AcpProcess):
    """An agent started before its document's prompt is known: the handshake and the session
    the next turn asks for (`asked`: the stored one to continue, None for a new one) happen on
    a thread of their own, and the first turn waits for that thread instead of doing them."""

    def __init__(self, *args: Any, asked: str | None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.asked = asked
        self.ahead: SessionOpened | None = None  # the session opened, until a turn takes it
        self.prepared = threading.Event()

    def prepare(self) -> AheadProcess:
        """Start the program (AgentCannotStart if there is none), then get it ready aside."""
        self.spawn()
        threading.Thread(target=self._prepare, name="agentdoc-acp-ahead", daemon=True).start()
        return self

    def _prepare(self) -> None:
        try:
            self.ready()
            self.ahead = super().open_session(self.asked)
            log.info("%s: session opened ahead of the prompt (%s)", self.name, self.ahead.how)
        except AgentCannotStart as exc:  # the turn, if one comes, tries again and says why
            log.info("%s: not ready ahead of the prompt: %s", self.name, exc)
        except Exception:  # a thread's error must not vanish
            log.exception("%s: getting ready ahead of the prompt failed", self.name)
        finally:
            self.prepared.set()

    def open_session(
        self, session_id: str | None, *, fork: bool = False, seeded: bool = False
    ) -> SessionOpened:
        # The handshake and a session load are each bounded by their own timeouts.
        self.prepared.wait(self.handshake_timeout + self.session_timeout)
        ahead, self.ahead = self.ahead, None
        if ahead is None or fork or session_id != self.asked:
            return super().open_session(session_id, fork=fork, seeded=seeded)
        if seeded and ahead.how == "new":  # the turn sends the conversation so far
            return dataclasses.replace(ahead, how="seeded")
        return ahead


class WarmAcp(WarmHandle):
    """A warm ACP agent as the daemon's pool sees it."""

    process: AcpProcess

    def started_for(self, request: AgentRequest) -> bool:
        # The stored session the turn continues, or a new one whose id the agent chose.
        process = self.process
        return isinstance(process, AheadProcess) and request.resume == process.asked

    def continues(self, request: AgentRequest) -> bool:
        # A model or effort the document changed is set when a session opens.
        return super().continues(request) and (request.model, request.effort) == (
            self.process.settled
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
    request: AgentRequest
    policy: str | None = None

    def _policy(self) -> dict[str, Any]:
        """The user's permission policy, put to the agent as its mode (or, for an agent
        without an asking mode, through its environment)."""
        by_env = bool(policy_env(self.command, self.policy or DEFAULT_POLICY))
        return {"policy": self.policy, "policy_set": by_env, "clearance": self.request.clearance}

    def start(self) -> WarmAcp:
        process = AcpProcess(
            list(self.command), self.cwd, self.env, name=self.name, key=self.key,
            **self._policy(),
        )  # fmt: skip
        return WarmAcp(process.spawn())

    def start_ahead(self) -> WarmAcp | None:
        """The agent for the document's next turn, its session opened before the prompt; None
        for a fork (which session it copies is the turn's to find out)."""
        request = self.request
        if request.fork or request.resume_at:
            return None
        process = AheadProcess(
            list(self.command),
            self.cwd,
            self.env,
            name=self.name,
            key=self.key,
            asked=request.resume,
            **self._policy(),
        )
        # What `reusable_for` asks of the turn to come besides its session: that it is the
        # exchange right after the last one the session holds.
        process.last_turn = request.turn - 1
        return WarmAcp(process.prepare(), ahead=True)


def warm(
    request: AgentRequest,
    command: Sequence[str],
    extra_env: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
    policy: str | None = None,
) -> WarmAcpStart:
    env = agent_env(os.environ if environ is None else environ, extra_env, command)
    env.update(policy_env(command, policy or DEFAULT_POLICY))
    key = ("acp", tuple(command), str(request.cwd), tuple(sorted(env.items())), policy)
    return WarmAcpStart(key, tuple(command), request.cwd, env, request.agent, request, policy)
