"""What a turn asks of an agent, whatever its protocol."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.prompt import ImagePart


@dataclass(frozen=True)
class AgentRequest:
    """One turn for an agent. Permission fields come from Settings, never from a document."""

    prompt: str
    cwd: Path
    resume: str | None = None
    session_id: str | None = None
    fork: bool = False
    # With `fork`: the fork ends at this point of the resumed session (the agent's own id of a
    # turn's last message), so it holds only the turns up to there.
    resume_at: str | None = None
    model: str | None = None
    effort: str | None = None
    append_system: str | None = None
    # Files no tool of the agent may write (the document, its sidecar, `.agentdoc/`): built by
    # agentdoc from the document's own path, never taken from document text.
    protect: tuple[Path, ...] = ()
    # The id the prompt's message gets in the session, where the agent lets us choose it (the
    # warm Claude CLI's stream-json input; never in argv), so the turn can be found in it at once.
    message_id: str | None = None
    # The document's exchange this request creates (never sent to the agent): a warm process is
    # reused only for the turn right after the last one it ran, so it has seen every earlier turn.
    turn: int = 0
    # Which agent answers (a name the launcher knows, never a command).
    agent: str = "claude"
    # What to send instead of `prompt` if the agent finds it cannot continue `resume` (the
    # prompt with the conversation so far); agents that check the session first ignore it.
    seeded_prompt: str | None = None
    # Pictures the prompt names, checked and read by agentdoc; each protocol sends them after
    # the text as image content (an agent that cannot take pictures must refuse the turn).
    images: tuple[ImagePart, ...] = ()
    # The running total the agent last reported for the session this turn continues, from our
    # own turn record: an agent that reports the session's cost so far (the Claude CLI, resumed
    # or forked) has it subtracted, so a footer shows the turn's own cost.
    cost_before: float | None = None
    # What the person said answering the last turn's tool requests, for an agent whose answer
    # has no field for it (kept by agentdoc till now): the prompt opens with it when the
    # session is the one those requests were in.
    said_before: tuple[str, ...] = ()
    # The gate's leave to start an agent in `cwd` (agents/base/clearance.py): a request without
    # one starts nothing.
    clearance: Clearance | None = None
    # Set once what must happen before the agent's first tool has happened (the undo snapshot
    # of the folders it may change, taken beside the request): no tool of this turn may run
    # before it is set. An agent that can hold its tools holds them (the Claude CLI, with a
    # hook every tool waits for); one that cannot waits for it before sending the prompt.
    # None: nothing to wait for.
    tools_after: threading.Event | None = None
