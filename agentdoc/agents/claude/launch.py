"""Starting the Claude CLI for a turn: one-shot, or a warm process the daemon keeps.

A warm process is reused only when the next turn would have started the very same CLI: the
same argv apart from the session flags, the same cwd and environment (the key), and the session
the process is already in (`--resume=<its session>`, no fork, the next exchange).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.base.warm import WarmHandle
from agentdoc.agents.claude.process import (
    build_argv,
    build_env,
    check_argv,
    resolve_executable,
    spawn,
)
from agentdoc.agents.claude.turn import ClaudeTurn
from agentdoc.agents.claude.usage import Prices
from agentdoc.agents.claude.warm import WarmProcess
from agentdoc.config import Settings

_SESSION_FLAGS = ("--resume=", "--session-id=", "--fork-session", "--resume-session-at=")
# Each model's price as this process's turns have read it from the CLI's results, one-shot and
# warm alike: a turn the CLI ends without a result is estimated at it.
PRICES = Prices()


def shape(argv: list[str]) -> tuple[str, ...]:
    """The argv without its session flags: what a reused process must agree on."""
    return tuple(a for a in argv if not a.startswith(_SESSION_FLAGS))


def start(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> ClaudeTurn:
    return ClaudeTurn(spawn(request, settings, environ), request.cost_before or 0.0, prices=PRICES)


class WarmClaude(WarmHandle):
    """A warm CLI as the daemon's pool sees it."""

    process: WarmProcess

    def started_for(self, request: AgentRequest) -> bool:
        # Started with a `--session-id` of its own: the first turn of a new session goes to
        # it, whatever id that turn's plan drew (a plan draws one per look).
        return request.session_id is not None and request.resume is None

    def begin(self, request: AgentRequest) -> ClaudeTurn:
        process = self.process
        # What this process has counted itself (its own total, whatever it started from),
        # else our record of the session's.
        counted = process.running_cost is not None
        before = process.running_cost if counted else request.cost_before
        return ClaudeTurn(
            process.begin(
                request.prompt,
                request.turn,
                request.message_id,
                request.images,
                request.tools_after,
            ),
            before or 0.0,
            process.counted,
            counted,
            PRICES,
        )


@dataclass(frozen=True)
class WarmClaudeStart:
    key: object
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    request: AgentRequest

    def start(self) -> WarmClaude:
        return WarmClaude(
            WarmProcess(self.argv, self.cwd, self.env, self.request.clearance, self.key).start()
        )

    def start_ahead(self) -> WarmClaude | None:
        request = self.request
        if request.fork or request.resume_at:
            return None
        if request.resume is None:
            if request.session_id is None:
                return None
            # A new session: the CLI starts with the id drawn now, and its first prompt
            # (the transcript, for a document with history) is sent when it is saved.
            process = WarmProcess(self.argv, self.cwd, self.env, self.request.clearance, self.key)
            ahead = WarmClaude(process.start(), ahead=True)
            ahead.process.last_turn = request.turn - 1
            return ahead
        if request.session_id:
            return None
        started = self.start()
        # What `reusable_for` asks of the turn to come: the session the CLI resumes, and that
        # it is the exchange right after the last one the session holds.
        started.process.session_id = request.resume
        started.process.last_turn = request.turn - 1
        return started


def warm(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> WarmClaudeStart:
    argv = build_argv(resolve_executable(settings.claude), request, settings, warm=True)
    check_argv(argv)
    env = build_env(os.environ if environ is None else environ, settings)
    key = (shape(argv), str(request.cwd), tuple(sorted(env.items())))
    return WarmClaudeStart(key, argv, request.cwd, env, request)
