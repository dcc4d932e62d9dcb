"""``agentdoc fork``: copy a conversation, through one of its exchanges, into a new document.

The new document gets the parent's frontmatter (without its session), the turns 1..N, lineage
in ``agentdoc.forked_from`` and a fresh ``## User`` heading. Its first prompt then either
continues the parent's Claude session as a fork (when N is the parent's last exchange: that
session holds exactly this history) or opens a new session seeded with the transcript; see
`session.resume_target`. The parent document and its session are never touched.

Claude resumes a session only from the folder it was recorded in, so a fork placed in another
folder gets an ``agentdoc.cwd`` that points back at the parent's working folder.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.document import (
    NEW_FILE_MODE,
    STREAMING_MARK,
    TEMP_PREFIX,
    Document,
    DocumentError,
    FrontmatterError,
    dominant_newline,
    parse,
    read_text,
    set_meta,
    sidecar_path,
)
from agentdoc.errors import AgentdocError
from agentdoc.turn import history
from agentdoc.turn.session import Lineage, working_dir

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
    if not 1 <= chosen <= count:
        raise AgentdocError(f"--turn must be between 1 and {count} (the exchanges in {path})")
    return chosen


def _relative(target: Path, folder: Path) -> str:
    return Path(os.path.relpath(os.path.realpath(target), os.path.realpath(folder))).as_posix()


def plan_fork(
    path: Path, new: Path, doc: Document, turn: int, *, allow_cwd_outside: bool = False
) -> ForkPlan:
    parent_folder, new_folder = path.parent.absolute(), new.parent.absolute()
    last = turn == doc.turn_count()
    meta: dict[str, Any] = {"session": None, "session_agent": None}
    link = None
    same_cwd = True
    if os.path.realpath(parent_folder) != os.path.realpath(new_folder):
        # Only computing where the parent runs; whether a document may run there is checked
        # when it does.
        cwd = _relative(working_dir(path, doc, allow_outside=True), new_folder)
        # Claude keeps sessions per working folder, so continuing the parent's session needs
        # its folder; but a document may only run the CLI inside its own folder tree unless
        # the user's config allows more. Otherwise the fork starts its own session, seeded
        # with the transcript.
        same_cwd = allow_cwd_outside or not (cwd == ".." or cwd.startswith("../"))
        meta["cwd"] = None if cwd == "." or not same_cwd else cwd
        sidecar = sidecar_path(path)
        link = (sidecar.name, _relative(sidecar, new_folder))
    lineage = Lineage(
        document=_relative(path, new_folder),
        session=doc.meta.session,
        turn=turn,
        fork_session=last and doc.meta.session is not None and same_cwd,
    )
    meta["forked_from"] = lineage.model_dump()
    return ForkPlan(turn, lineage, meta, link)


def _exchange_end(doc: Document, turn: int) -> int:
    replies = [t for t in doc.turns if t.role == "assistant"]
    return replies[turn - 1].end


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
    snapshot = history.read_snapshot(path)
    if snapshot is None or snapshot.session != plan.lineage.session:
        return
    if snapshot.turns == plan.turn:
        history.write_snapshot(new, snapshot)


def fork(
    path: Path, new: Path, turn: int | None = None, *, allow_cwd_outside: bool = False
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
    plan = plan_fork(
        path, new, doc, check_fork(path, text, doc, turn), allow_cwd_outside=allow_cwd_outside
    )
    _create(new, fork_text(doc, plan))
    _carry_snapshot(path, new, plan)
    log.info("forked %s at turn %d into %s", path, plan.turn, new)
    return plan
