"""Which machine answers a document in a synced folder, so one prompt is answered once.

Each machine writes only its own claim file, `.agentdoc-claims/NAME.MACHINE.json` beside the
document, and the sync tool carries it to the others: a file only one machine writes can never
become a conflict copy, and the document itself is not touched. A claim holds a number, the
epoch: the highest epoch owns the document (on a tie, the lowest machine id, the same answer
on every machine). A new document is claimed with epoch 1 by the first machine that sees a
prompt in it, which then waits `claim_wait` seconds for a rival claim carried by the sync before
answering; `agentdoc adopt` takes a document over with the next epoch. The machine's id is kept
in local state (never synced) with its hostname for people to read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agentdoc.errors import AgentdocError
from agentdoc.userstate import user_state_dir

log = logging.getLogger(__name__)

CLAIMS = ".agentdoc-claims"


@dataclass(frozen=True)
class Claim:
    machine: str  # the stable id from this machine's local state
    host: str  # its hostname, for the person reading why a prompt waits
    epoch: int

    @property
    def who(self) -> str:
        return f"{self.host} ({self.machine[:8]})"


def machine_id(folder: Path | None = None) -> str:
    """This machine's id, made once and kept in local state."""
    path = (folder or user_state_dir()) / "machine-id"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if found := path.read_text(encoding="utf-8").strip():
            return found
    made = uuid.uuid4().hex
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(made + "\n", encoding="utf-8")
    except OSError as exc:
        raise AgentdocError(f"cannot keep this machine's id in {path}: {exc}") from exc
    return made


def claim_path(doc: Path, machine: str) -> Path:
    return doc.parent / CLAIMS / f"{doc.name}.{machine}.json"


def read_claims(doc: Path) -> list[Claim]:
    """Every machine's claim on `doc`; a file the sync tool copied or half-wrote is skipped."""
    found = []
    for path in (doc.parent / CLAIMS).glob(f"{_glob_safe(doc.name)}.*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            claim = Claim(str(data["machine"]), str(data["host"]), int(data["epoch"]))
        except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
            _tell_unreadable(path, exc)
            continue
        # Only the file named after its machine: a conflict copy's name differs.
        if path == claim_path(doc, claim.machine):
            found.append(claim)
    return found


_told: set[tuple[Path, int]] = set()  # unreadable claim files told, by their version


def _tell_unreadable(path: Path, exc: Exception) -> None:
    """Say once per version of it that a claim file is not one; it is left as it is (it may
    be half-delivered by the sync tool, or someone's to look at)."""
    try:
        version = (path, path.stat().st_mtime_ns)
    except OSError:
        return  # gone meanwhile: nothing to tell
    if version in _told:
        return
    _told.add(version)
    why = exc.strerror if isinstance(exc, OSError) else "it is not a claim agentdoc wrote"
    log.warning(
        "%s is not a readable claim (%s); it counts for no machine. Remove it, or run "
        "`agentdoc adopt` on its document to claim it for this machine",
        path,
        why,
    )


def _glob_safe(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[]" else c for c in name)


def owner(claims: list[Claim]) -> Claim | None:
    return min(claims, key=lambda c: (-c.epoch, c.machine), default=None)


def write_claim(doc: Path, claim: Claim) -> None:
    path = claim_path(doc, claim.machine)
    temp = path.with_name(f".{path.name}.tmp")
    try:
        path.parent.mkdir(exist_ok=True)
        temp.write_text(json.dumps(asdict(claim)) + "\n", encoding="utf-8")
        os.replace(temp, path)
    except OSError as exc:
        raise AgentdocError(
            f"cannot write this machine's claim on {doc.name} ({path}): {exc}"
        ) from exc


def adopt(doc: Path, me: str, host: str | None = None) -> Claim:
    """Make this machine the one that answers `doc`, from now on, on every machine."""
    top = owner(read_claims(doc))
    claim = Claim(me, host or socket.gethostname(), (top.epoch if top else 0) + 1)
    write_claim(doc, claim)
    return claim


@dataclass
class Claims:
    """This machine's side of the rule, as the daemon's gate asks it."""

    given: str | None = None  # this machine's id; None: the one in local state, when needed
    host: str = field(default_factory=socket.gethostname)
    wait: float = 10.0  # seconds a new claim waits for a rival one to arrive
    clock: Callable[[], float] = time.monotonic
    _claimed: dict[Path, float] = field(default_factory=dict)

    @property
    def me(self) -> str:
        # Read (or made) on first use, so a daemon with no synced folder never needs it.
        if self.given is None:
            self.given = machine_id()
        return self.given

    def elsewhere(self, doc: Path) -> bool:
        """Whether another machine answers `doc` (its open reply is that machine's to close)."""
        top = owner(read_claims(doc))
        return top is not None and top.machine != self.me

    def why_not(self, doc: Path) -> tuple[str | None, bool]:
        """Why this machine may not answer `doc` now (None: it may), and whether that is only
        the short wait of a fresh claim (not worth a notification)."""
        top = owner(read_claims(doc))
        if top is None:
            write_claim(doc, Claim(self.me, self.host, 1))
            self._claimed[doc] = self.clock()
            top = Claim(self.me, self.host, 1)
        if top.machine == self.me:
            since = self._claimed.get(doc)
            if since is not None and self.clock() - since < self.wait:
                return "claiming it: waiting for other machines' claims to arrive", True
            self._claimed.pop(doc, None)
            return None, False
        if self._claimed.pop(doc, None) is not None:
            # Lost the tie: take the claim back so it never outranks the winner later.
            with contextlib.suppress(OSError):
                claim_path(doc, self.me).unlink()
        return (
            f"not sent: {top.who} answers this document; run `agentdoc adopt {doc}` here "
            "to answer it on this machine instead",
            False,
        )
