"""What runs around a turn without being the turn: its hooks.

A hook is one class with up to three steps; `Hook` gives each a default that does nothing:

* ``before(start)`` — the gate gave leave and the agent is about to be asked. Quick: work that
  takes time goes on a thread of the hook's own, and when the agent's tools must wait for it
  (the undo snapshot must be complete before a tool changes a file) it holds them with
  ``start.tools.hold()`` and lets go when done (`ToolGate`, the request's ``tools_after``).
* ``settle()`` — the agent is done: wait for what ``before`` left running. Called before the
  reply's final write, and again whatever way the turn ends.
* ``after(end)`` — the reply is final in the document (a turn that got one): keep its records,
  commit, push.

`DEFAULT_HOOKS` is the table of them, in the order they run; `TurnRunner` makes one of each for
every turn (`TurnHooks`). A new hook is a class here and a row in the table. A hook that raises
is logged and the turn goes on: what follows a turn must never cost the person its reply.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Protocol

from agentdoc.agents import Reply, mark_turn
from agentdoc.config import Settings
from agentdoc.document import Document, DocumentError, FrontmatterError, parse, read_text
from agentdoc.errors import AgentdocError
from agentdoc.records import after_turn as snapshot_after
from agentdoc.records import before_turn as snapshot_before
from agentdoc.records import record_turn, set_mark
from agentdoc.turn import gitcommit, gitsync
from agentdoc.turn.session import TurnPlan

log = logging.getLogger(__name__)


class ToolGate(threading.Event):
    """`AgentRequest.tools_after`: set once every `before` step has run and every hook that
    held the agent's tools has let go. Holders start their work at `asked`: once the agent has
    been asked, or once anything waits for the gate; `waited` tells the latter (the agent's
    prompt or its first tool waits)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = threading.Event()
        self.waited = threading.Event()
        self._lock = threading.Lock()
        self._holds = 0
        self._opened = False

    def hold(self) -> Callable[[], None]:
        """Keep the tools waiting; the function returned lets go (once, however often called)."""
        with self._lock:
            self._holds += 1
        released = threading.Event()

        def release() -> None:
            with self._lock:
                if released.is_set():
                    return
                released.set()
                self._holds -= 1
                ready = self._opened and self._holds == 0
            if ready:
                self.set()

        return release

    def open(self) -> None:
        """Every `before` step has run: the tools go as soon as nothing holds them."""
        with self._lock:
            self._opened = True
            ready = self._holds == 0
        if ready:
            self.set()

    def wait(self, timeout: float | None = None) -> bool:
        self.waited.set()
        self.asked.set()
        return super().wait(timeout)


@dataclass(frozen=True)
class TurnStart:
    """What a `before` step sees: the turn as planned, about to be sent."""

    path: Path
    settings: Settings
    environ: Mapping[str, str]
    plan: TurnPlan
    tools: ToolGate


@dataclass(frozen=True)
class TurnEnd:
    """What an `after` step sees: the turn whose reply is final in the document."""

    path: Path
    settings: Settings
    environ: Mapping[str, str]
    plan: TurnPlan
    session: str | None  # the session that holds the turn (None: none may be resumed)
    started: datetime
    reply: Reply
    complete: bool  # the turn ended done, not failed or interrupted
    final: Document | None  # the document as the turn left it, when it could be parsed


class TurnHook(Protocol):
    """The steps a hook may take around a turn (see the module's docstring)."""

    def before(self, start: TurnStart) -> None: ...

    def settle(self) -> None: ...

    def after(self, end: TurnEnd) -> None: ...


class Hook:
    """A hook that does nothing: a hook is a subclass taking only the steps it needs."""

    def before(self, start: TurnStart) -> None:
        pass

    def settle(self) -> None:
        pass

    def after(self, end: TurnEnd) -> None:
        pass


class Transcript(Hook):
    """Keep the conversation as the session now knows it, for the next turn's edits diff."""

    def after(self, end: TurnEnd) -> None:
        record_turn(end.path, end.plan.known, end.plan.turn, end.session, end.final)


class Marks(Hook):
    """Where the turn sits in its session (a complete one only), and what it cost."""

    def after(self, end: TurnEnd) -> None:
        request, reply, usage = end.plan.request, end.reply, end.reply.usage
        mark = None
        if end.complete and end.session:
            mark = mark_turn(
                end.environ,
                end.session,
                request.cwd,
                request.prompt,
                since=end.started,
                message_id=request.message_id,
                agent=request.agent,
                cost_total=usage.session_cost_usd if usage else None,
                branch=reply.branch,
            )
        cost = usage.cost_usd if usage else None  # kept with its mark: an undo keeps it counted
        set_mark(end.path, end.plan.turn, mark, cost, end.session if reply.partial_kept else None)


# Seconds the undo snapshot leaves an agent that was asked, and is not waiting for it yet, to
# send its request: on two cores, its git processes starting at once made the warm turn's
# request ~5 ms later (median of 32 turns, 50.5 against 45.6 ms).
SNAPSHOT_GRACE = 0.05


class FileSnapshots(Hook):
    """The folders the agent may write in, recorded before the turn and after it, for `undo`.

    Only the prompt is on the way from the save to the request: the snapshot runs beside it, on
    a thread, and holds the agent's tools until it is complete. The agent holds its tools until
    then where it can (a hook before each tool); where it cannot, the prompt itself waits."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def before(self, start: TurnStart) -> None:
        release = start.tools.hold()
        plan = start.plan

        def take() -> None:
            # Its git processes start once the agent waits for them, or SNAPSHOT_GRACE after
            # the prompt went out: meanwhile the agent has the machine to send its request
            # (a warm Claude Code, about 25 ms), which they would otherwise compete with.
            start.tools.asked.wait()
            start.tools.waited.wait(SNAPSHOT_GRACE)
            try:  # never raises (it logs), but the agent must never wait for ever
                snapshot_before(
                    start.path,
                    plan.turn,
                    plan.request.cwd,
                    start.settings.add_dirs,
                    start.environ,
                )
            finally:
                release()

        thread = threading.Thread(target=take, name="agentdoc-snapshot", daemon=True)
        try:
            thread.start()
        except BaseException:
            release()
            raise
        self._thread = thread

    def settle(self) -> None:
        """What follows (the record after the turn, the next turn's snapshot) works on the same
        shadow repository: the snapshot before is complete first."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def after(self, end: TurnEnd) -> None:
        snapshot_after(end.path, end.plan.turn, end.environ)


class GitPerTurn(Hook):
    """Commit the document when git per turn is on; commit and push it under `git: sync`."""

    def after(self, end: TurnEnd) -> None:
        path, turn, doc = end.path, end.plan.turn, end.final
        if doc is None:
            try:
                doc = parse(read_text(path))
            except (AgentdocError, DocumentError, FrontmatterError) as exc:
                log.warning("%s: no git commit for turn %d: %s", path, turn, exc)
                return
        if gitsync.sync_on(doc, end.settings):
            if (why := gitsync.push(path, gitcommit.turn_message(path, turn))) is not None:
                log.warning("%s: turn %d not pushed: %s", path, turn, why)
        elif gitcommit.enabled(doc, end.settings):
            gitcommit.commit(path, gitcommit.turn_message(path, turn))


# The hooks every turn runs, in this order: the turn's records first, git last (a push may
# wait on the network, and the next turn's plan reads the transcript and the marks).
DEFAULT_HOOKS: tuple[type[TurnHook], ...] = (Transcript, Marks, FileSnapshots, GitPerTurn)


class TurnHooks:
    """One turn's hooks, one of each kind made for it, each step run in the table's order."""

    def __init__(self, path: Path, kinds: Iterable[type[TurnHook]] = DEFAULT_HOOKS) -> None:
        self.path = path
        self.hooks = [kind() for kind in kinds]

    def before(self, start: TurnStart) -> None:
        for hook in self.hooks:
            self._guarded(hook, "before", partial(hook.before, start))
        start.tools.open()

    def settle(self) -> None:
        for hook in self.hooks:
            self._guarded(hook, "settle", hook.settle)

    def after(self, end: TurnEnd) -> None:
        for hook in self.hooks:
            self._guarded(hook, "after", partial(hook.after, end))

    def _guarded(self, hook: TurnHook, step: str, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception:
            log.exception(
                "%s: the %s hook failed (%s the turn); the turn goes on",
                self.path,
                type(hook).__name__,
                step,
            )


def resolved(environ: Mapping[str, str] | None) -> Mapping[str, str]:
    """The environment hooks see: the turn's, else this process's."""
    return os.environ if environ is None else environ
