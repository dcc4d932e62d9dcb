"""A sync tool's conflict copy of a session document, merged back into the document.

When a phone and this machine both change a synced document within the sync tool's window,
the tool keeps one version under the document's name and the other as a conflict copy
(`chat.sync-conflict-….md`, `chat (… conflicted copy …).md`). The copy is never a document
(see :mod:`agentdoc.document.byproducts`); its text is merged into the document (both sides'
additions kept, see :func:`merge_copy`), and the copy is moved into `.agentdoc/conflicts/`,
kept, so the folder holds one conversation again. A prompt the copy added is then the
document's pending prompt, answered once.

Some tools resolve a conflict by renaming both sides (rclone `bisync`: `chat.md.conflict1` and
`chat.md.conflict2`, before 1.66 `chat.md..path1` and `chat.md..path2`), so no file is left
under the document's name. The document is then rebuilt from its copies (:func:`rebuild`), with
agentdoc's own last write of it as the base where it is known, and answered like a merge.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from agentdoc.daemon.notices import hold
from agentdoc.daemon.state import DocState
from agentdoc.daemon.synced.kept import kept_dir
from agentdoc.daemon.watch.settle import read_stable
from agentdoc.document import (
    WriteLedger,
    conflict_original,
    decode,
    digest,
    is_session_document,
    merge_copy,
    merge_document,
    parse,
    parsed_or_none,
    write_bytes,
    write_text,
)

log = logging.getLogger(__name__)


def conflicts_of(document: Path) -> list[Path]:
    """The conflict copies of `document` in its folder."""
    try:
        names = os.listdir(document.parent)
    except OSError:
        return []
    return sorted(document.parent / n for n in names if conflict_original(n) == document.name)


def original_of(copy: Path) -> Path | None:
    name = conflict_original(copy.name)
    return None if name is None else copy.with_name(name)


@dataclass(frozen=True)
class Absorbed:
    text: str | None = None  # the document as merged and written; None: nothing was merged
    kept: Path | None = None  # where the copy now is
    problem: str | None = None  # why the copy was left in place


def absorb(copy: Path, document: Path, ledger: WriteLedger) -> Absorbed:
    """Merge `copy` into `document`, write it, and move the copy into the state folder."""
    copy_data, doc_data = read_stable(copy), read_stable(document)
    if copy_data is None or doc_data is None:
        return Absorbed()  # gone meanwhile (another machine merged it first)
    doc_text, copy_text = decode(document, doc_data), decode(copy, copy_data)
    other = _other_conversation(doc_text, copy_text)
    if other is not None:
        problem = (
            f"the sync tool's copy {copy.name} holds another conversation (session {other}), "
            "so it was not merged"
        )
        _tell_in_document(document, doc_text, doc_data, problem, ledger)
        return Absorbed(problem=problem)
    merged = merge_copy(doc_text, copy_text)
    if not merged.clean:
        return Absorbed(problem=f"the sync tool's copy {copy.name} could not be merged cleanly")
    if merged.text != doc_text:
        displaced = write_text(document, merged.text, ledger, expected=doc_data)
        if displaced is not None:
            write_bytes(document, displaced)  # a save landed: theirs stays; the copy waits
            return Absorbed()
    return Absorbed(merged.text, _keep(copy, document))


def rebuild(
    document: Path, copies: list[Path], ledger: WriteLedger, *, answered: bool = False
) -> Absorbed:
    """Write `document`, which the sync tool renamed away, from its conflict copies, and move
    them into the state folder; only a document agentdoc wrote (its last write known, one copy
    being it, or `answered`: its turns' status is there from before a restart). The copy that
    is agentdoc's own write (else the first by name: bisync's first is this machine's side) is
    ours; each other copy is merged into it, from agentdoc's last whole write of the document
    where known, else by what they share."""
    read = [(copy, data) for copy in copies if (data := read_stable(copy)) is not None]
    if not read or os.path.lexists(document):
        return Absorbed()  # nothing left to rebuild from, or the document is back
    read.sort(key=lambda found: not ledger.is_own(document, found[1]))  # ours first, stable
    base = ledger.last(document)
    if base is None and not answered and not ledger.is_own(document, read[0][1]):
        return Absorbed()  # a file agentdoc never wrote: the person's own, their business
    texts = [decode(copy, data) for copy, data in read]
    if not all(is_session_document(text) for text in texts):
        return Absorbed()  # not a conversation (any more): left as the tool left it
    sessions = {session_of(text) for text in texts} - {None}
    if len(sessions) > 1:
        names = ", ".join(copy.name for copy, _ in read)
        return Absorbed(problem=f"the sync tool's copies {names} hold different conversations")
    merged = texts[0]
    for copy_text in texts[1:]:
        both = (
            merge_document(base.decode("utf-8", "replace"), merged, copy_text)
            if base is not None
            else merge_copy(merged, copy_text)
        )
        if not both.clean:
            return Absorbed(problem="the sync tool's copies could not be merged cleanly")
        merged = both.text
    if os.path.lexists(document):
        return Absorbed()  # written meanwhile (the tool, or the person): theirs stands
    write_text(document, merged, ledger)
    kept = [_keep(copy, document) for copy, _ in read]
    return Absorbed(merged, kept[0])


def session_of(text: str) -> str | None:
    """The session a version of a document records; None too when it does not read."""
    parsed = parsed_or_none(text)
    return None if parsed is None else parsed.meta.session


def _keep(copy: Path, document: Path) -> Path:
    kept = _unused(kept_dir(document) / copy.name)
    kept.parent.mkdir(parents=True, exist_ok=True)
    os.replace(copy, kept)
    return kept


def take_in(copy: Path, document: Path, doc: DocState, ledger: WriteLedger) -> str | None:
    """Merge `copy` into `document` (no turn runs on it): the document as merged, to be
    considered like a save, or None when nothing was merged (told where it matters)."""
    absorbed = absorb(copy, document, ledger)
    if absorbed.problem is not None:
        log.warning("%s: %s; it stays in the folder", document, absorbed.problem)
        hold(document, f"{absorbed.problem}: merge it by hand, then delete it")
        if (data := read_stable(document)) is not None:  # the notice it may have written
            doc.seen, doc.text = digest(data), decode(document, data)
        return None
    if absorbed.text is None:
        return None
    log.info("%s: merged the sync tool's copy %s (kept in %s)", document, copy.name, absorbed.kept)
    doc.seen, doc.text = digest(absorbed.text.encode("utf-8")), absorbed.text
    return absorbed.text


def _other_conversation(doc_text: str, copy_text: str) -> str | None:
    """The copy's session id when it differs from the document's: not the same conversation."""
    ours, theirs = session_of(doc_text), session_of(copy_text)
    # A copy we cannot read as a document is merged as text.
    return theirs if ours and theirs and ours != theirs else None


def _tell_in_document(
    document: Path, text: str, data: bytes, problem: str, ledger: WriteLedger
) -> None:
    """A notice above the first turn (never inside a prompt), once."""
    notice = f"> [!WARNING]\n> agentdoc: {problem}. Merge what you need by hand, then delete it.\n"
    if notice in text:
        return
    at = parse(text).preamble_end
    head = text[:at] if text[:at].endswith("\n\n") or not at else text[:at].rstrip("\n") + "\n\n"
    displaced = write_text(document, head + notice + "\n" + text[at:], ledger, expected=data)
    if displaced is not None:
        write_bytes(document, displaced)  # a save landed: it stays; the notice comes next time


def _unused(path: Path) -> Path:
    n = 1
    found = path
    while found.exists():
        n += 1
        found = path.with_name(f"{path.stem}.{n}{path.suffix}")
    return found
