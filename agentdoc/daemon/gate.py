"""Whether a due prompt may be sent now: trust on this machine and the turn budget.

A prompt the gate holds is not lost: the status says why and what releases it, and the daemon
asks again (`due`) until the reason is gone — the folder trusted, the hour's window moved on.
`agentdoc run FILE` is the user's own local action and never comes through here.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.claims import Claims
from agentdoc.daemon.classify import Held as Held  # a reason classify holds a prompt for
from agentdoc.daemon.synced import synced_root
from agentdoc.daemon.trust import TrustList

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


@dataclass
class Gate:
    trust: TrustList
    limit: int  # max_turns_per_hour, 0 = none
    synced_root: Callable[[Path], Path | None]
    claims: Claims | None = None  # None: this daemon answers whatever it is given
    clock: Callable[[], float] = time.monotonic
    held: dict[Path, Held] = field(default_factory=dict)  # document → why it waits
    _told: dict[Path, str] = field(default_factory=dict)  # document → the kind last told
    _started: dict[Path, deque[float]] = field(default_factory=dict)
    _looked: float = float("-inf")

    def why_held(self, path: Path, git_root: Path | None = None) -> Held | None:
        """Why a prompt of `path` may not be sent now, or None; `git_root`: the repository a
        `git: sync` document is pulled into, as much a way in for others as a synced folder."""
        root = self.synced_root(path)
        if (shared := root or git_root) is not None:
            self.trust.refresh()  # a stat; `agentdoc trust` may have just written the file
            if not self.trust.covers(path):
                return Held(untrusted_reason(shared), "trust", git_root=git_root)
        wait = budget_wait(self._started.setdefault(path, deque()), self.limit, self.clock())
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
        self._started.setdefault(path, deque()).append(self.clock())

    def forget(self, path: Path) -> None:
        self.held.pop(path, None)
        self._told.pop(path, None)
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
    )
