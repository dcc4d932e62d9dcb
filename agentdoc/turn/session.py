"""Which agent session a turn goes to, and what prompt it carries.

The document, not the CLI's session store, is the source of truth, so a turn is planned from
the document plus a few facts about the world (`Facts`, gathered by `prepare_turn`):

* A new session (``start``, a document without a session, a session the CLI no longer has, a
  fork at an earlier turn) gets an id chosen up front (``--session-id``), so the id is known even
  if the turn dies early, and its first prompt carries the document's transcript.
* A resumed session gets the new prompt, plus what it cannot know: a diff of edits to earlier
  turns, and the partial text of a previous reply that was interrupted, unless the session
  kept it (see `history`).
* The first prompt of a fork continues the parent's session as a fork (``--resume=PARENT
  --fork-session --session-id=NEW``), cut at the forked turn when that is not the session's last
  (``--resume-session-at``, from the turn's mark); the parent session is unchanged. Only a fork
  whose turn has no mark (an agent that cannot branch there) gets a seeded session.
* After `undo`, ``agentdoc.resume_at`` names the point of the session to continue from (the end
  of the turn before the undone one): the next prompt forks the session there, so the model
  forgets the undone turn.

A resume plan carries a `fallback`: the rebuild to run at once if the CLI answers "No
conversation found" after all.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentdoc.agents import LEGACY_AGENT, AgentRequest, AgentSpec, ImagePart
from agentdoc.config import Settings
from agentdoc.document import Document
from agentdoc.errors import AgentdocError
from agentdoc.records import (
    Snapshot,
    Target,
    archived_transcript,
    first_turn_of_fork,
    history_edits,
    joined,
    kept_in,
    read_marks,
    read_snapshot,
    resume_target,
    session_total,
    unfinished_reply,
    unfinished_to_send,
)
from agentdoc.turn import includes
from agentdoc.turn.compose import compose_prompt
from agentdoc.turn.whose import agent_of, drives_session, name_of, session_owner, switch_note

log = logging.getLogger(__name__)

Mode = Literal["start", "resume", "run"]

LOST_NOTE = "new session: the previous one was not found"


@dataclass(frozen=True)
class Facts:
    """What planning needs beyond the document; `prepare_turn` gathers them."""

    session_found: bool | None = None  # can the CLI resume the target session? None: unknown
    # The text the target session holds of its last reply (None: unknown or not looked up).
    session_reply: str | None = None
    snapshot: Snapshot | None = None
    images: tuple[ImagePart, ...] = ()  # the pictures the prompt names, read and checked
    archived: str = ""  # the transcript of the exchanges moved to the document's archive
    # The running cost the agent last reported for the target session (our turn record).
    session_cost: float | None = None


@dataclass(frozen=True)
class TurnPlan:
    request: AgentRequest
    turn: int  # 1-based number of the exchange this turn creates
    new_session: bool
    known: str = ""  # the transcript of the earlier turns as the model knows it after this prompt
    note: str | None = None  # said in the footer, e.g. that the session was rebuilt
    fallback: TurnPlan | None = None  # the rebuild to run if the CLI lost the session after all


def working_dir(path: Path, doc: Document, *, allow_outside: bool = False) -> Path:
    """Where the CLI runs: the document's folder, or `agentdoc.cwd` inside that folder's tree.

    A document may not send the CLI (and so its file tools) outside its own folder tree: that
    would let a shared document choose what the agent can read. The user's config can allow it
    (`allow_cwd_outside = true`).
    """
    folder = path.parent.absolute()
    if not doc.meta.cwd:
        return folder
    try:
        cwd = (folder / doc.meta.cwd).resolve()
        inside = cwd.is_relative_to(folder.resolve())
        is_dir = cwd.is_dir()
    except (ValueError, OSError) as exc:
        raise AgentdocError(f"{path}: agentdoc.cwd {doc.meta.cwd!r} is not a usable path") from exc
    if not inside and not allow_outside:
        raise AgentdocError(
            f"{path}: agentdoc.cwd {doc.meta.cwd!r} points outside the document's folder; "
            "set allow_cwd_outside = true in your agentdoc config to permit that"
        )
    if not is_dir:
        raise AgentdocError(f"{path}: agentdoc.cwd {doc.meta.cwd!r} is not a folder")
    return cwd


def _request(
    path: Path,
    doc: Document,
    settings: Settings,
    model: str | None,
    prompt: str,
    *,
    resume: str | None = None,
    fork: bool = False,
    resume_at: str | None = None,
    session_id: str | None = None,
    agent: str = LEGACY_AGENT,
    cost_before: float | None = None,
) -> AgentRequest:
    return AgentRequest(
        agent=agent,
        prompt=prompt,
        cwd=working_dir(path, doc, allow_outside=settings.allow_cwd_outside),
        resume=resume,
        session_id=session_id,
        fork=fork,
        resume_at=resume_at if fork else None,
        model=model or doc.meta.model or settings.model,
        effort=doc.meta.effort or settings.effort,
        append_system=doc.meta.system,
        message_id=str(uuid.uuid4()),
        cost_before=cost_before,
    )


def _fork_note(doc: Document, *, seeded: bool = False) -> str | None:
    fork = first_turn_of_fork(doc)
    if fork is None:
        return None
    note = f"forked from {fork.document}, turn {fork.turn}"
    return f"{note}; a new session seeded with the transcript" if seeded else note


def _new_session(
    path: Path,
    doc: Document,
    prompt: str,
    settings: Settings,
    model: str | None,
    note: str | None,
    archived: str = "",
    agent: AgentSpec | None = None,
    known: str | None = None,
) -> TurnPlan:
    """`known`: the transcript, if the caller made it already (a long one costs milliseconds)."""
    known = joined(archived, doc.transcript()) if known is None else known
    seeded = compose_prompt(prompt, transcript=known)
    # An agent that takes the new session's id from us gets one; others choose their own.
    chosen = str(uuid.uuid4()) if agent_of(agent).can.chooses_session_id else None
    request = _request(path, doc, settings, model, seeded, session_id=chosen, agent=name_of(agent))
    return TurnPlan(request, doc.turn_count() + 1, True, known, note)


def plan_turn(
    path: Path,
    doc: Document,
    prompt: str,
    mode: Mode,
    settings: Settings,
    *,
    session: str | None = None,
    model: str | None = None,
    facts: Facts = Facts(),
    agent: AgentSpec | None = None,
) -> TurnPlan:
    """Decide start/resume/fork/rebuild for the pending ``prompt`` (pure, given ``facts``)."""
    plan = _plan(
        path, doc, prompt, mode, settings, session=session, model=model, facts=facts, agent=agent
    )
    return _attach(plan, facts.images)


def _attach(plan: TurnPlan, images: tuple[ImagePart, ...]) -> TurnPlan:
    """The plan (and its fallback) with the prompt's pictures on the request."""
    if not images:
        return plan
    fallback = None if plan.fallback is None else _attach(plan.fallback, images)
    request = dataclasses.replace(plan.request, images=images)
    return dataclasses.replace(plan, request=request, fallback=fallback)


def _plan(
    path: Path,
    doc: Document,
    prompt: str,
    mode: Mode,
    settings: Settings,
    *,
    session: str | None,
    model: str | None,
    facts: Facts,
    agent: AgentSpec | None = None,
) -> TurnPlan:
    found = resume_target(doc, session)
    target, fork = found.session, found.fork
    if mode == "resume" and not target:
        raise AgentdocError(
            f"{path} has no session to resume yet; use `agentdoc start` or `agentdoc run`"
        )
    switched = None if session else switch_note(doc, agent)
    if switched is not None:
        return _new_session(path, doc, prompt, settings, model, switched, facts.archived, agent)
    if mode == "start" or target is None:
        note = _fork_note(doc, seeded=True)
        return _new_session(path, doc, prompt, settings, model, note, facts.archived, agent)
    if not drives_session(agent):
        assert agent is not None
        return _continue_elsewhere(path, doc, prompt, settings, model, agent, found, facts)
    if facts.session_found is False:
        if session:
            raise _not_found(path, doc, settings, session, agent)
        return _new_session(
            path, doc, prompt, settings, model, LOST_NOTE, facts.archived, agent=agent
        )
    known = joined(facts.archived, doc.transcript())
    text = _resumed(prompt, doc, facts, known, target)
    request = _request(
        path,
        doc,
        settings,
        model,
        text,
        resume=target,
        fork=fork,
        resume_at=found.at,
        session_id=str(uuid.uuid4()) if fork else None,
        agent=name_of(agent),
        cost_before=facts.session_cost,
    )
    # An explicitly named session is never silently replaced by a new one.
    fallback = (
        None
        if session
        else _new_session(
            path, doc, prompt, settings, model, LOST_NOTE, facts.archived, agent, known=known
        )
    )
    note = _fork_note(doc) if fork else None
    return TurnPlan(request, doc.turn_count() + 1, fork, known, note, fallback)


def _not_found(
    path: Path, doc: Document, settings: Settings, session: str, agent: AgentSpec | None
) -> AgentdocError:
    """The session the person named is not the agent's any more (never silently replaced)."""
    folder = working_dir(path, doc, allow_outside=settings.allow_cwd_outside)
    store = agent_of(agent).sessions
    kept = f"; {store.kept}" if store is not None else ""
    return AgentdocError(f"session {session} was not found for the folder {folder}{kept}")


def _resumed(prompt: str, doc: Document, facts: Facts, known: str, session: str) -> str:
    """The prompt into a session that has the conversation: what it missed, and the prompt."""
    edits = history_edits(facts.snapshot, known, session)
    unfinished = unfinished_to_send(unfinished_reply(doc), facts.session_reply)
    return compose_prompt(prompt, edits=edits, unfinished=unfinished)


def _continue_elsewhere(
    path: Path,
    doc: Document,
    prompt: str,
    settings: Settings,
    model: str | None,
    agent: AgentSpec,
    found: Target,
    facts: Facts,
) -> TurnPlan:
    """Continue an agent's own session where the agent keeps it: it finds out itself whether it can
    (resume, load, fork) and sends the seeded prompt in a new session when it cannot. `undo` and a
    fork at an earlier turn continue the copy the agent made of its session right after that
    turn."""
    known = joined(facts.archived, doc.transcript())
    # A point inside the session is not something such an agent can continue from; a point that is
    # the session's own id is the end of a copy the agent made after that turn: forked as it is.
    if found.at is not None and found.at != found.session:
        note = "new session, sent the conversation so far (the agent cannot go back in its own)"
        return _new_session(path, doc, prompt, settings, model, note, facts.archived, agent)
    assert found.session is not None
    text = _resumed(prompt, doc, facts, known, found.session)
    request = _request(
        path,
        doc,
        settings,
        model,
        text,
        resume=found.session,
        fork=found.fork,
        agent=agent.name,
        cost_before=facts.session_cost,
    )
    seeded = compose_prompt(prompt, transcript=known)
    request = dataclasses.replace(request, seeded_prompt=seeded)
    fork_note = _fork_note(doc) if found.fork else None
    return TurnPlan(request, doc.turn_count() + 1, found.fork, known, fork_note)


def prepare_turn(
    path: Path,
    doc: Document,
    prompt: str,
    mode: Mode,
    settings: Settings,
    *,
    session: str | None = None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
    agent: AgentSpec | None = None,
) -> TurnPlan:
    """Gather the facts (includes, session store, history snapshot), then `plan_turn`.

    Raises `IncludeRefused` before anything is sent when the prompt names a file or picture
    it may not send.
    """
    cwd = working_dir(path, doc, allow_outside=settings.allow_cwd_outside)
    context = includes.resolve(prompt, includes.place_for(cwd, settings.add_dirs), limits(settings))
    target = resume_target(doc, session).session
    found = reply = None
    store = agent_of(agent).sessions if drives_session(agent) else None
    if (
        target is not None
        and mode != "start"
        and store is not None
        and session_owner(doc) == name_of(agent)
    ):
        env = os.environ if environ is None else environ
        found = store.has_session(env, target, cwd)
        if found is False and answered_last_turn(path, doc, target):
            # Our own record says this session answered the last turn: a warm CLI writes its
            # session file only after that turn ends, so a quick next save can look before it
            # is there. Resume; if the CLI has truly lost it, the plan's fallback rebuilds.
            found = None
        # Only an interrupted reply needs the session's own copy of it.
        if found and unfinished_reply(doc) is not None:
            reply = store.last_reply_text(env, target, cwd)
    if reply is None and target is not None and kept_in(path, doc.turn_count()) == target:
        # Its agent said the session keeps the interrupted text (no file of its to read).
        reply = unfinished_reply(doc)
    facts = Facts(
        session_found=found,
        session_reply=reply,
        snapshot=read_snapshot(path),
        images=context.images,
        archived=archived_transcript(path, doc),
        session_cost=None if mode == "start" else session_cost(path, doc, target),
    )
    return plan_turn(
        path,
        doc,
        context.text,
        mode,
        settings,
        session=session,
        model=model,
        facts=facts,
        agent=agent,
    )


def session_cost(path: Path, doc: Document, session: str | None) -> float | None:
    """The running cost the agent last reported for ``session`` in this document's turns, or,
    for a fork's first prompt, in its parent's."""
    if session is None:
        return None
    fork = first_turn_of_fork(doc)
    where = path if fork is None else path.parent / fork.document
    return session_total(read_marks(where), session)


def answered_last_turn(path: Path, doc: Document, session: str) -> bool:
    mark = read_marks(path).get(doc.turn_count())
    return mark is not None and mark.session == session


def limits(settings: Settings) -> includes.Limits:
    return includes.Limits(
        settings.include_file_limit, settings.include_prompt_limit, settings.image_limit
    )
