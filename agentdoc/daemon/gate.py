"""Whether an agent may start, and whether a due prompt may be sent now: trust on this
machine, the turn budget and other machines' claims.

An agent started in a folder runs that folder's own settings as this machine's user (an
agent's own hooks), so the gate decides every *start* of an agent, not only every prompt: a turn, a
start ahead of the prompt (an editor's open, an empty `## User`, a restart), `agentdoc run`,
`ask`, a fork, an undo's replay. It is the only code that issues a `Clearance`, the leave
without which the agent layer starts no process (`agentdoc/agents/base/clearance.py`). A
synced or `git: sync` folder this machine does not trust gets none; a trusted one gets leave
with the folder's own agent settings (trusting the folder is opting in to them, unless
`folder_agent_settings` is off); your own command in an untrusted one starts without them.

A prompt the gate holds is not lost: the status says why and what releases it, and the daemon
asks again (`due`) until the reason is gone — the folder trusted, the hour's window moved on.
`agentdoc run FILE` is the user's own local action: its prompt is never held, but its agent
starts with the same leave (`own_command`), the folder's settings off where it is not trusted.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.agents import Clearance
from agentdoc.config import Settings
from agentdoc.daemon.classify import Held as Held  # a reason classify holds a prompt for
from agentdoc.daemon.synced.claims import Claims
from agentdoc.daemon.synced.pace import synced_root
from agentdoc.daemon.synced.trust import TrustList, covers
from agentdoc.document import Document
from agentdoc.errors import AgentdocError
from agentdoc.turn import Clearer, sync_on, toplevel

HOUR = 3600.0
LOOK_EVERY = 1.0  # seconds between looks at held prompts (and at the config's trusted list)


def untrusted_reason(root: Path) -> str:
    return (
        f"not sent: {root} is a synced folder this machine does not trust yet; run "
        f"`agentdoc trust {root}` here to answer its prompts"
    )


def budget_reason(name: str, limit: int, wait: float) -> str:
    minutes = max(1, round(wait / 60))
    return (
        f"not sent: this document had {limit} turns in the last hour (max_turns_per_hour); "
        f"sent in about {minutes} min, or run `agentdoc run {name}` to send it now"
    )


def budget_wait(started: deque[float], limit: int, now: float) -> float:
    """Seconds until one more turn fits in the hour (0: now)."""
    while started and started[0] <= now - HOUR:
        started.popleft()
    if limit <= 0 or len(started) < limit:
        return 0.0
    return started[-limit] + HOUR - now


class NotTrusted(AgentdocError):
    """An agent would start in a synced folder this machine does not trust."""


def shared_root(
    path: Path, synced: Callable[[Path], Path | None], git_root: Path | None
) -> Path | None:
    """The folder others write into that holds `path`: its sync tool's, or the `git: sync`
    repository `git_root`; None for a folder only this machine writes."""
    root = synced(path)
    if root is None and git_root is not None:
        inside = Path(path).absolute()
        root = git_root if inside == git_root or git_root in inside.parents else None
    return root


def leave(
    document: Path,
    cwd: Path,
    synced: Callable[[Path], Path | None],
    git_root: Path | None,
    folder_settings: bool,
    trusted: Callable[[Path], bool],
    *,
    own_command: bool = False,
) -> Clearance | Path:
    """Leave to start `document`'s agent in `cwd`, or the shared folder this machine does not
    trust. Both the document's folder and the working folder count: a document may set its
    `cwd` into a synced folder. The user's `own_command` needs no trust, but in a shared folder
    it does not trust its agent starts without the folder's own settings; so does any agent
    in a shared folder when the config's `folder_agent_settings` is off."""
    shared, all_trusted = False, True
    # A file is in the synced folder and trust of its folder: one look at each distinct folder
    # (a turn's cwd is most often the document's own, and each look lists every folder above).
    for place in dict.fromkeys((document.parent, cwd)):
        root = shared_root(place, synced, git_root)
        if root is None:
            continue
        shared = True
        if not trusted(place):
            if not own_command:
                return root
            all_trusted = False
    if not shared:
        return Clearance(cwd, folder_settings=True, why="a folder only this machine writes")
    why = "your own command" if own_command else "a trusted shared folder"
    return Clearance(cwd, folder_settings=folder_settings and all_trusted, why=why)


def _git_root(document: Path, parsed: Document, settings: Settings) -> Path | None:
    return toplevel(document) if sync_on(parsed, settings) else None


def own_command(document: Path, settings: Settings) -> Clearer:
    """Leave for the user's own command on `document` (`agentdoc run`, `ask`, `undo`…): no
    trust asked, the folder's own agent settings off where others write into it untrusted."""

    def clear(cwd: Path, parsed: Document) -> Clearance:
        granted = leave(
            document,
            cwd,
            lambda path: synced_root(path, settings),
            _git_root(document, parsed, settings),
            settings.folder_agent_settings,
            lambda path: covers(settings.trusted, path),
            own_command=True,
        )
        assert isinstance(granted, Clearance)  # no trust asked, none refused
        return granted

    return clear


@dataclass
class Gate:
    trust: TrustList
    limit: int  # max_turns_per_hour, 0 = none
    synced_root: Callable[[Path], Path | None]
    claims: Claims | None = None  # None: this daemon answers whatever it is given
    clock: Callable[[], float] = time.monotonic
    folder_settings: bool = True  # the config's folder_agent_settings
    settings: Settings | None = None  # for a document's `git: sync` (the config's `git`)
    held: dict[Path, Held] = field(default_factory=dict)  # document → why it waits
    _told: dict[Path, str] = field(default_factory=dict)  # document → the kind last told
    _started: dict[Path, deque[float]] = field(default_factory=dict)
    _looked: float = float("-inf")
    # Turn threads and the hints thread ask for leave beside the loop's own questions.
    _lock: threading.RLock = field(default_factory=threading.RLock)

    def apply(self, settings: Settings) -> None:
        """The config was saved: its budget, claim wait and folder settings hold from now."""
        self.settings, self.limit = settings, settings.max_turns_per_hour
        self.folder_settings = settings.folder_agent_settings
        if self.claims is not None:
            self.claims.wait = settings.claim_wait

    def clearance(self, document: Path, cwd: Path, git_root: Path | None) -> Clearance:
        """Leave to start `document`'s agent in `cwd`; NotTrusted when a shared folder it
        touches is not trusted here."""
        with self._lock:
            self.trust.refresh()  # a stat; `agentdoc trust` may have just written the file
            granted = leave(
                document, cwd, self.synced_root, git_root, self.folder_settings, self.trust.covers
            )
        if isinstance(granted, Path):
            raise NotTrusted(untrusted_reason(granted))
        return granted

    def clearer(self, document: Path) -> Clearer:
        """What a daemon's turn of `document` asks for its agent's leave."""
        settings = self.settings or Settings()
        return lambda cwd, parsed: self.clearance(
            document, cwd, _git_root(document, parsed, settings)
        )

    def ahead(self, document: Path, cwd: Path, parsed: Document) -> Clearance | None:
        """Leave to start `document`'s agent before any prompt: only where its prompt would
        be sent now (trusted, within the budget, claimed by no other machine)."""
        settings = self.settings or Settings()
        git_root = _git_root(document, parsed, settings)
        try:
            granted = self.clearance(document, cwd, git_root)
        except NotTrusted:
            return None
        with self._lock:
            started = self._started.setdefault(document, deque())
            if budget_wait(started, self.limit, self.clock()) > 0:
                return None
        if self.answered_elsewhere(document):
            return None
        return granted

    def why_held(self, path: Path, git_root: Path | None = None) -> Held | None:
        """Why a prompt of `path` may not be sent now, or None; `git_root`: the repository a
        `git: sync` document is pulled into, as much a way in for others as a synced folder."""
        root = self.synced_root(path)
        if (shared := root or git_root) is not None:
            self.trust.refresh()  # a stat; `agentdoc trust` may have just written the file
            if not self.trust.covers(path):
                return Held(untrusted_reason(shared), "trust", git_root=git_root)
        with self._lock:
            started = self._started.setdefault(path, deque())
            wait = budget_wait(started, self.limit, self.clock())
        if wait > 0:
            return Held(budget_reason(path.name, self.limit, wait), "budget", git_root=git_root)
        if root is not None and self.claims is not None:
            why, quiet = self.claims.why_not(path)
            return None if why is None else Held(why, "claiming" if quiet else "owner", quiet)
        return None

    def untrusted(self, path: Path) -> str | None:
        """Why nothing is answered in `path` on this machine (an untrusted synced folder)."""
        root = self.synced_root(path)
        if root is None:
            return None
        self.trust.refresh()
        return None if self.trust.covers(path) else untrusted_reason(root)

    def answered_elsewhere(self, path: Path) -> bool:
        """Whether another machine answers `path`: a reply open in it may be streaming there."""
        if self.claims is None or self.synced_root(path) is None:
            return False
        return self.claims.elsewhere(path)

    def hold(self, path: Path, held: Held) -> tuple[bool, bool]:
        """Remember a held prompt: whether its status needs writing (the words changed), and
        whether it is worth telling (a new kind of reason, not a quiet one)."""
        before = self.held.get(path)
        self.held[path] = held
        tell = not held.quiet and self._told.get(path) != held.kind
        if tell:
            self._told[path] = held.kind
        return before is None or before.why != held.why, tell

    def release(self, path: Path) -> None:
        self.held.pop(path, None)

    def started(self, path: Path) -> None:
        self.held.pop(path, None)
        self._told.pop(path, None)
        with self._lock:
            self._started.setdefault(path, deque()).append(self.clock())

    def forget(self, path: Path) -> None:
        self.held.pop(path, None)
        self._told.pop(path, None)
        with self._lock:
            self._started.pop(path, None)

    def due(self) -> list[Path]:
        """Held documents whose reason is gone or changed (trust is read again first)."""
        now = self.clock()
        if not self.held or now - self._looked < LOOK_EVERY:
            return []
        self._looked = now
        self.trust.refresh()
        return [
            path
            for path, held in list(self.held.items())
            if (now_held := self.why_held(path, held.git_root)) is None or now_held.why != held.why
        ]


def gate_for(
    settings: Settings, synced: Callable[[Path], Path | None] | None, machine: str | None
) -> Gate:
    """The daemon's gate: trust from the config, the budget, the claims of synced documents
    (`synced` and `machine` replace the markers and the local machine id, for tests)."""
    return Gate(
        TrustList(settings.trusted),
        settings.max_turns_per_hour,
        synced or (lambda path: synced_root(path, settings)),
        Claims(machine, wait=settings.claim_wait),
        folder_settings=settings.folder_agent_settings,
        settings=settings,
    )
