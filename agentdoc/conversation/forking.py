"""``agentdoc fork``: copy a conversation, through one of its exchanges, into a new document.

The new document gets the parent's frontmatter (without its session), the turns 1..N, lineage
in ``agentdoc.forked_from`` and a fresh ``## User`` heading. Its first prompt then continues the
parent's session as a fork — cut at turn N by the turn's mark (`marks`) when N is not the
session's last turn — or, when no session holds exactly turns 1..N, opens a new session seeded
with the transcript; see `lineage.resume_target`. The parent document and its session are never
touched.

An agent may resume a session only from the folder it was recorded in, so a fork placed in another
folder gets an ``agentdoc.cwd`` that points back at the parent's working folder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents import branch_point
from agentdoc.document import (
    NEW_FILE_MODE,
    STREAMING_MARK,
    TEMP_PREFIX,
    Document,
    DocumentError,
    FrontmatterError,
    archive_path,
    atomic_write,
    dominant_newline,
    parse,
    read_text,
    set_meta,
    sidecar_path,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import Lineage, read_marks, read_snapshot, write_snapshot
from agentdoc.turn import working_dir

log = logging.getLogger(__name__)

# What every streaming reply region starts with, whatever its nonce.


@dataclass(frozen=True)
class ForkPlan:
    turn: int
    lineage: Lineage
    meta: dict[str, Any]  # updates to the copied `agentdoc` mapping
    thinking_link: tuple[str, str] | None  # footer link target in the parent → in the fork


def check_fork(path: Path, text: str, doc: Document, turn: int | None) -> int:
    """The exchange to fork at, or AgentdocError if this document cannot be forked there."""
    if STREAMING_MARK in text:
        raise AgentdocError(
            f"{path}: a reply is streaming into it; fork it once the turn has finished"
        )
    count = doc.turn_count()
    if count == 0:
        raise AgentdocError(f"{path} has no completed exchange to fork yet")
    chosen = count if turn is None else turn
    archived = doc.meta.archived or 0
    if not 1 + archived <= chosen <= count:
        raise AgentdocError(
            f"--turn must be between {1 + archived} and {count} (the exchanges in {path}"
            + (f"; 1-{archived} are in its archive)" if archived else ")")
        )
    return chosen


def _relative(target: Path, folder: Path) -> str:
    return Path(os.path.relpath(os.path.realpath(target), os.path.realpath(folder))).as_posix()


Branch = tuple[str, str]  # a session, and the agent's id of where a copy of it ends


def _branch_point(doc: Document, turn: int, branch: Branch | None) -> tuple[str | None, str | None]:
    """The session holding turns 1..``turn`` and where in it the fork ends (None: its end)."""
    if turn == doc.turn_count() and doc.meta.session and not doc.meta.resume_at:
        return doc.meta.session, None
    if branch is not None:
        return branch
    return doc.meta.session, None


def plan_fork(
    path: Path,
    new: Path,
    doc: Document,
    turn: int,
    *,
    allow_cwd_outside: bool = False,
    branch: Branch | None = None,
) -> ForkPlan:
    parent_folder, new_folder = path.parent.absolute(), new.parent.absolute()
    last = turn == doc.turn_count() and not doc.meta.resume_at
    session, at = _branch_point(doc, turn, branch)
    meta: dict[str, Any] = {"session": None, "session_agent": None}
    link = None
    same_cwd = True
    if os.path.realpath(parent_folder) != os.path.realpath(new_folder):
        # Only computing where the parent runs; whether a document may run there is checked
        # when it does.
        cwd = _relative(working_dir(path, doc, allow_outside=True), new_folder)
        # Agents may keep sessions per working folder, so continuing the parent's session needs
        # its folder; but a document may only run the CLI inside its own folder tree unless
        # the user's config allows more. Otherwise the fork starts its own session, seeded
        # with the transcript.
        same_cwd = allow_cwd_outside or not (cwd == ".." or cwd.startswith("../"))
        meta["cwd"] = None if cwd == "." or not same_cwd else cwd
        sidecar = sidecar_path(path)
        link = (sidecar.name, _relative(sidecar, new_folder))
    lineage = Lineage(
        document=_relative(path, new_folder),
        session=session,
        turn=turn,
        fork_session=(last or at is not None) and session is not None and same_cwd,
        at=at,
    )
    meta["forked_from"] = lineage.model_dump(exclude={"at"} if at is None else set())
    return ForkPlan(turn, lineage, meta, link)


def _exchange_end(doc: Document, turn: int) -> int:
    replies = [t for t in doc.turns if t.role == "assistant"]
    return replies[turn - 1 - (doc.meta.archived or 0)].end


def _relink(text: str, link: tuple[str, str] | None) -> str:
    if link is None:
        return text
    old, new = link
    return re.sub(rf"\]\({re.escape(old)}#turn-", lambda _m: f"]({new}#turn-", text)


def fork_text(doc: Document, plan: ForkPlan) -> str:
    """The fork's full text: parent frontmatter and turns 1..N, lineage, an empty prompt."""
    nl = dominant_newline(doc.text)
    head = doc.text[: _exchange_end(doc, plan.turn)].rstrip()
    text = f"{_relink(head, plan.thinking_link)}{nl}{nl}## User{nl}{nl}"
    return set_meta(text, plan.meta)


def _write_new(target: Path, text: str) -> None:
    with open(target, "x", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(target, NEW_FILE_MODE)


def _create(new: Path, text: str) -> None:
    """Write ``new`` whole, and never over a file that appeared meanwhile."""
    # The shared temp prefix keeps a watcher from ever taking this file for a document.
    tmp = new.with_name(f"{TEMP_PREFIX}fork-{new.name}")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # left over from a crash
    try:
        _write_new(tmp, text)
        # Publishing by hard link is atomic and, unlike a rename, fails if the target exists.
        os.link(tmp, new)
    except FileExistsError as exc:
        raise AgentdocError(f"{new} already exists; agentdoc will not overwrite it") from exc
    except OSError:
        log.debug("cannot hard-link %s; creating %s directly", tmp, new)
        try:
            _write_new(new, text)
        except FileExistsError as exc:
            raise AgentdocError(f"{new} already exists; agentdoc will not overwrite it") from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _carry_snapshot(path: Path, new: Path, plan: ForkPlan) -> None:
    """Give the fork the parent's snapshot, so edits the parent session lacks still get sent."""
    if not plan.lineage.fork_session:
        return
    snapshot = read_snapshot(path)
    if snapshot is None or snapshot.session != plan.lineage.session:
        return
    if snapshot.turns == plan.turn:
        write_snapshot(new, snapshot)


def _archive_copy(path: Path, new: Path, doc: Document) -> bytes | None:
    """The parent's archive for the fork, which carries the parent's archived count."""
    if not doc.meta.archived:
        return None
    if os.path.lexists(archive_path(new)):
        raise AgentdocError(f"{archive_path(new)} already exists; agentdoc will not overwrite it")
    try:
        return archive_path(path).read_bytes()
    except OSError as exc:
        raise AgentdocError(f"{path}: its archive cannot be read: {exc}") from exc


def _relink_archive(text: str, path: Path, new: Path) -> str:
    old, fresh = archive_path(path).name, archive_path(new).name
    return text.replace(f"[{old}]({old})", f"[{fresh}]({fresh})").replace(
        f"[{old}](<{old}>)", f"[{fresh}](<{fresh}>)"
    )


def _marked_branch(
    path: Path, doc: Document, turn: int, environ: Mapping[str, str] | None
) -> Branch | None:
    """Where the agent's session ends turn ``turn``, from the turn's mark (None: unknown)."""
    mark = read_marks(path).get(turn)
    if mark is None:
        return None
    try:
        cwd = working_dir(path, doc, allow_outside=True)
    except AgentdocError:
        return None
    return branch_point(os.environ if environ is None else environ, mark, cwd)


def fork(
    path: Path,
    new: Path,
    turn: int | None = None,
    *,
    allow_cwd_outside: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ForkPlan:
    """Create ``new`` as a fork of ``path`` through exchange ``turn`` (default: the last)."""
    if new.suffix != ".md":
        raise AgentdocError(f"{new}: a session document must end in .md")
    if os.path.lexists(new):
        raise AgentdocError(f"{new} already exists; agentdoc will not overwrite it")
    if not new.parent.is_dir():
        raise AgentdocError(f"folder {new.parent} does not exist")
    text = read_text(path)
    try:
        doc = parse(text)
    except (DocumentError, FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc
    chosen = check_fork(path, text, doc, turn)
    branch = _marked_branch(path, doc, chosen, environ)
    plan = plan_fork(path, new, doc, chosen, allow_cwd_outside=allow_cwd_outside, branch=branch)
    archive = _archive_copy(path, new, doc)
    _create(new, _relink_archive(fork_text(doc, plan), path, new))
    if archive is not None:
        atomic_write(archive_path(new), archive)
    _carry_snapshot(path, new, plan)
    log.info("forked %s at turn %d into %s", path, plan.turn, new)
    return plan
