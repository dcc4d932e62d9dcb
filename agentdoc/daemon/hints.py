"""Getting a document ready before its prompt is saved: its headings indexed, its CLI started.

A person about to write a prompt leaves hints: their editor opens the document (the kernel
reports the open; agentdoc's own reads are told apart), a save leaves a `## User` heading with no
prompt under it yet, or the document was active shortly before the daemon started. On a hint the
document is read and parsed, which fills the headings cache (so the first save of a long
conversation costs what later saves cost), and, with warm sessions on, the CLI its next turn
would start is started (`WarmPool.prewarm`, which decides whether there is room and a session to
resume). Nothing is sent: the process waits for the prompt, and goes idle as any warm process
does if none comes. Nothing starts, either, where the document's prompt would not be sent now:
the gate gives leave ahead (`Gate.ahead`) only in a folder this machine trusts, within the
budget and unclaimed by another machine; an agent started in a folder runs that folder's own
settings before any prompt.

Hints are handled on one background thread, so the daemon's loop never waits for a parse or a
process start; a hint for a document whose last hint is still waiting there adds nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentdoc.agents import AgentRequest, Clearance, resolve_agent
from agentdoc.config import Settings
from agentdoc.daemon.pool import WarmPool
from agentdoc.daemon.watch.tree import maybe_session
from agentdoc.document import (
    Document,
    DocumentError,
    FrontmatterError,
    decode,
    is_session_document,
    parse,
    read_bytes,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import open_regions
from agentdoc.turn import prepare_turn

log = logging.getLogger(__name__)


# The gate's leave to start a document's agent ahead of its prompt (document, cwd, parsed).
Ahead = Callable[[Path, Path, Document], Clearance | None]


def next_request(
    path: Path, text: str, settings: Settings, environ: Mapping[str, str] | None, ahead: Ahead
) -> AgentRequest | None:
    """What the document's next turn would ask of the CLI, its prompt not yet known, with the
    gate's leave to start it; None for a document that is not a conversation, has a reply
    still open, or may not start its agent now."""
    if not is_session_document(text) or open_regions(text):
        return None
    try:
        doc = parse(text)
        # The agent the document names, as its turn resolves it: without it the plan would
        # be the default agent's, and another agent's document would get a program it never
        # uses.
        agent = resolve_agent(doc.meta.agent, settings, where=str(path))
        plan = prepare_turn(path, doc, "", "run", settings, environ=environ, agent=agent)
    except (DocumentError, FrontmatterError, AgentdocError) as exc:
        log.debug("%s: nothing to prepare: %s", path, exc)
        return None
    leave = ahead(path, plan.request.cwd, doc)
    if leave is None:
        log.debug("%s: not started ahead: the gate would hold its prompt", path)
        return None
    return dataclasses.replace(plan.request, turn=plan.turn, clearance=leave)


def frontmatter_block(text: str) -> str:
    """The text up to the frontmatter's closing line: all a warm process's key depends on
    (agent, model, cwd, session), apart from the user's config."""
    end = text.find("\n---", 3)
    return text[:end] if end > 0 else ""


def _session_text(path: Path) -> str | None:
    data = read_bytes(path)
    return decode(path, data) if maybe_session(data) else None


class Hints:
    """Hints handed to one background thread; see the module's docstring."""

    def __init__(
        self,
        pool: WarmPool | None,
        settings: Settings,
        environ: Mapping[str, str] | None,
        ahead: Ahead,
    ) -> None:
        self._pool = pool
        self._ahead = ahead
        self._settings = settings
        self._environ = environ
        self._waiting: set[Path] = set()
        self._found: list[tuple[int, Path]] = []  # session documents of the start-up walk
        self._lock = threading.Lock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentdoc-hints")
        # The frontmatter each document's process was last checked against: a hint finding it
        # unchanged, and the process still up, plans nothing (a long document's plan costs
        # tens of milliseconds, and every turn's end is a hint).
        self._checked: dict[Path, str] = {}
        self.warmed = 0  # processes started on a hint, for tests and benchmarks
        self.reasons: list[str] = []  # why each of them was started

    def hint(self, path: Path, why: str, text: str | None = None) -> None:
        """Prepare `path` (whose content is `text`, if known) in the background."""
        with self._lock:
            if path in self._waiting:
                return
            self._waiting.add(path)
        with contextlib.suppress(RuntimeError):  # shutting down: no more hints
            self._worker.submit(self._prepare, path, why, text)

    def found_at_start(self, path: Path, mtime_ns: int) -> None:
        self._found.append((mtime_ns, path))

    def start_up_done(self) -> None:
        """Hint the session documents changed within `warm_idle` before start-up, most recent
        first, as many as may be warm at once (the walk's parse already indexed them all)."""
        since = time.time_ns() - int(self._settings.warm_idle * 1e9)
        recent = sorted((found for found in self._found if found[0] >= since), reverse=True)
        for _mtime, path in recent[: self._settings.warm_sessions]:
            self.hint(path, "used shortly before start-up")
        self._found.clear()

    def _prepare(self, path: Path, why: str, text: str | None) -> None:
        with self._lock:
            self._waiting.discard(path)
        try:
            self._warm(path, why, text if text is not None else _session_text(path))
        except (AgentdocError, OSError) as exc:
            log.debug("%s: not prepared ahead (%s): %s", path, why, exc)
        except Exception:
            log.exception("%s: preparing ahead of the prompt failed", path)

    def _warm(self, path: Path, why: str, text: str | None) -> None:
        pool = self._pool
        if text is None or pool is None:
            return
        head = frontmatter_block(text)
        if pool.holds(path) and self._checked.get(path) == head:
            return
        request = next_request(path, text, self._settings, self._environ, self._ahead)
        if request is None:
            return
        if pool.prewarm(path, request, self._settings, self._environ):
            self.warmed += 1
            self.reasons.append(why)
            log.info("%s: started its agent ahead of the prompt (%s)", path.name, why)
        if pool.holds(path):
            self._checked[path] = head

    def drain(self) -> None:
        """Wait until every hint given so far is handled (the worker takes them in order)."""
        with contextlib.suppress(RuntimeError):  # shut down: nothing is left to handle
            self._worker.submit(lambda: None).result()

    def close(self) -> None:
        """Drop hints not yet handled and wait for the one in hand: after this, none starts
        a process."""
        self._worker.shutdown(wait=True, cancel_futures=True)
