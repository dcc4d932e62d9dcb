"""Which files an undo puts back, and from what: the turns' snapshots, else the agent's own means.

A turn recorded before and after (`snapshots`) is taken back from its trees, whatever changed
the files. A turn without that record (run before snapshots were kept, or whose snapshot
failed) can still be taken back alone when the agent can restore what its tools did
(`restore_files`, from the turn's mark), or when its reply shows no tool call at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

from agentdoc.agents import Clearance, TurnMark, restore_files, unrestorable
from agentdoc.config import Settings
from agentdoc.document import Document, is_unanswered
from agentdoc.errors import AgentdocError
from agentdoc.records import restoring, snapshots
from agentdoc.records.shadow import Shadow
from agentdoc.records.snapshots import FolderRecord

# A tool call as `render.render_tool` shows it in a reply.
_TOOL_BLOCK = re.compile(r"^<details>", re.M)

Restore = Callable[[], int]  # puts the files back; how many it wrote or removed (-1: unknown)


def _complete(entries: list[FolderRecord] | None) -> bool:
    return bool(entries) and all(e.before and e.after and not e.problem for e in entries or [])


def _reply(doc: Document, turn: int) -> str:
    replies = [t for t in doc.turns if t.role == "assistant" and not is_unanswered(t)]
    index = turn - (doc.meta.archived or 0) - 1
    return replies[index].content if 0 <= index < len(replies) else ""


def files_to_restore(
    path: Path,
    doc: Document,
    turns: range,
    marks: Mapping[int, TurnMark],
    cwd: Path,
    settings: Settings,
    environ: Mapping[str, str],
    leave: Callable[[], Clearance],
    *,
    force: bool = False,
) -> Restore | None:
    """How to put back what ``turns`` changed (None: nothing to), or AgentdocError saying why
    it cannot be done exactly. Nothing is changed here."""
    shadow = snapshots.shadow_for(path, environ)
    record = snapshots.read_record(shadow)
    recorded = []
    for turn in turns:
        entries = record.get(turn)
        if _complete(entries):
            assert entries is not None
            recorded.append(entries)
        elif _TOOL_BLOCK.search(_reply(doc, turn)):
            if len(turns) == 1:
                by_agent = _by_agent(path, doc, turn, marks.get(turn), cwd, environ)
                return None if by_agent is None else _replay(by_agent, settings, environ, leave)
            why = next((e.problem for e in entries or [] if e.problem), None)
            raise AgentdocError(
                f"{path}: cannot undo turn {turn}: its tools ran and agentdoc kept no snapshot of "
                f"the files {f'({why})' if why else 'around it'}; undo fewer turns"
            )
    if not recorded:
        return None
    plan = restoring.plan(recorded, shadow.changes)
    if not plan.files and not plan.refusals():
        return None  # the turns changed no file
    if plan.refusals() and not force:
        raise AgentdocError(
            f"{path}: cannot undo {_turns(turns)}: " + "; ".join(plan.refusals()) + ". Nothing "
            "was changed; `--force` puts back every other file and overwrites the changed ones"
        )
    return lambda: _apply(shadow, plan)


def _apply(shadow: Shadow, plan: restoring.Plan) -> int:
    restoring.apply(shadow, plan.writes)
    return plan.files


def _turns(turns: range) -> str:
    return f"turn {turns[0]}" if len(turns) == 1 else f"turns {turns[0]}-{turns[-1]}"


def _by_agent(
    path: Path,
    doc: Document,
    turn: int,
    mark: TurnMark | None,
    cwd: Path,
    environ: Mapping[str, str],
) -> TurnMark | None:
    """A turn without snapshots: its mark, where the agent's own record says its tools
    changed files (None: they changed none), or AgentdocError why it cannot be undone."""
    found = None if mark is None else unrestorable(environ, mark, cwd)
    if found is None or mark is None:
        raise AgentdocError(
            f"{path}: cannot undo turn {turn}: its tools ran, and agentdoc has neither a snapshot "
            "of the files nor a record of where the turn sits in the agent's session"
        )
    changed, reasons = found
    if reasons:
        raise AgentdocError(
            f"{path}: cannot undo turn {turn} exactly: " + "; ".join(reasons) + ". Nothing was "
            "changed; take the reply out by hand and repair the files if you want to go back"
        )
    return mark if changed else None


def _replay(
    mark: TurnMark,
    settings: Settings,
    environ: Mapping[str, str],
    leave: Callable[[], Clearance],
) -> Restore:
    """Have the agent put back what its tools changed in the marked turn: an agent start like
    any other, with the gate's leave asked when it runs."""

    def restore() -> int:
        restore_files(settings, environ, mark, leave())
        return -1

    return restore
