"""What a resumed agent session knows of the conversation, and how the document differs from it.

The document is the source of truth, but a resumed session only knows what was sent to it. Two
things make them drift apart, and the next prompt tells the model about both:

* The user edited earlier turns. At the end of every turn the transcript of the completed turns
  is kept in ``.agentdoc/<name>.history.md`` (the *snapshot*); the next prompt into the same
  session carries a unified diff from the snapshot to the document's transcript now.
* The previous reply was interrupted or failed part-way. Some agents (and some releases of one
  agent) do not keep such partial text in their session, others do. Unless the session file shows
  it holds the text, the next prompt carries the text the document shows.

Everything but `read_snapshot`, `write_snapshot` and `record_turn` is pure.
"""

from __future__ import annotations

import difflib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from agentdoc.document import (
    LINE_BREAK,
    Document,
    DocumentError,
    FrontmatterError,
    archive_path,
    atomic_write,
    parse,
    parse_archive,
    read_text,
    strip_comments,
)
from agentdoc.errors import AgentdocError
from agentdoc.records.status import make_state_dir, state_file

log = logging.getLogger(__name__)

DIFF_LIMIT = 6000  # characters; a longer diff is cut, the model still learns what changed first
_HEADER = "<!-- agentdoc history v1 session={session} turns={turns} -->"
_HEADER_LINE = re.compile(r"<!-- agentdoc history v1 session=(\S+) turns=(\d+) -->\n")
_NO_SESSION = "-"
_EXPLAIN = (
    "<!-- The conversation as the agent's session knows it, as of the end of the last turn. "
    "agentdoc compares it with the document to tell the model about edits. -->"
)
# The start of the callout `render.render_problem` puts under a reply that did not finish.
_UNFINISHED = re.compile(r"^> \[!WARNING\][ \t]*\n> \*\*The reply (?:was interrupted|failed)", re.M)


@dataclass(frozen=True)
class Snapshot:
    session: str | None  # the session that knows this transcript
    turns: int  # completed exchanges it covers
    transcript: str


def snapshot_path(document: Path) -> Path:
    return state_file(document, ".history.md")


def format_snapshot(snapshot: Snapshot) -> str:
    header = _HEADER.format(session=snapshot.session or _NO_SESSION, turns=snapshot.turns)
    return f"{header}\n{_EXPLAIN}\n\n{snapshot.transcript}\n"


def parse_snapshot(text: str) -> Snapshot | None:
    """The snapshot in ``text``, or None if it is not one (a damaged file is just ignored)."""
    match = _HEADER_LINE.match(text)
    if match is None:
        return None
    rest = text[match.end() :]
    if rest.startswith(_EXPLAIN):
        rest = rest[len(_EXPLAIN) :]
    session = None if match.group(1) == _NO_SESSION else match.group(1)
    transcript = rest.removeprefix("\n\n").removesuffix("\n")
    return Snapshot(session, int(match.group(2)), transcript)


def read_snapshot(document: Path) -> Snapshot | None:
    try:
        text = snapshot_path(document).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse_snapshot(text)


def write_snapshot(document: Path, snapshot: Snapshot) -> None:
    path = snapshot_path(document)
    try:
        make_state_dir(path.parent)
        atomic_write(path, format_snapshot(snapshot).encode("utf-8"))
    except OSError as exc:
        # Without a snapshot the next turn only misses the edit diff; the turn itself is fine.
        log.warning("cannot write the history snapshot %s: %s", path, exc)


def edits_diff(before: str, after: str, limit: int = DIFF_LIMIT) -> str | None:
    """A compact unified diff from ``before`` to ``after``; None if they are the same."""
    if before == after:
        return None
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        "conversation as you knew it",
        "conversation now",
        n=1,
        lineterm="",
    )
    kept: list[str] = []
    size = 0
    rest = list(lines)
    for index, line in enumerate(rest):
        size += len(line) + 1
        if size > limit:
            kept.append(f"… ({len(rest) - index} more diff lines left out)")
            break
        kept.append(line)
    return "\n".join(kept)


def history_edits(snapshot: Snapshot | None, transcript: str, session: str) -> str | None:
    """The diff to send when resuming ``session``, if the conversation's past (``transcript``:
    archived exchanges and the document's) changed since."""
    if snapshot is None or snapshot.session != session:
        return None
    return edits_diff(snapshot.transcript, transcript)


def joined(*transcripts: str) -> str:
    return "\n\n".join(part for part in transcripts if part)


def archived_transcript(document: Path, doc: Document) -> str:
    """The transcript of the exchanges ``agentdoc archive`` moved out of the document."""
    count = doc.meta.archived or 0
    if count == 0:
        return ""
    path = archive_path(document)
    try:
        archive = parse_archive(read_text(path))
    except (AgentdocError, DocumentError, FrontmatterError) as exc:
        log.warning(
            "%s: its archive %s cannot be read (%s); sending without it", document, path, exc
        )
        return ""
    if archive.split.frontmatter is not None:
        log.warning("%s: %s has frontmatter, so it is not an archive; ignoring it", document, path)
        return ""
    return archive.transcript(count)


def unfinished_reply(doc: Document) -> str | None:
    """The partial text of the last reply if it was interrupted or failed part-way."""
    last = next((t for t in reversed(doc.turns) if t.role == "assistant"), None)
    if last is None:
        return None
    content = LINE_BREAK.sub("\n", strip_comments(last.content))
    callouts = list(_UNFINISHED.finditer(content))
    if not callouts:
        return None
    return content[: callouts[-1].start()].strip() or None


def _squashed(text: str) -> str:
    return " ".join(text.split())


def unfinished_to_send(unfinished: str | None, session_reply: str | None) -> str | None:
    """The interrupted text to send, unless the session already holds it.

    ``session_reply`` is the text the CLI's session keeps of that reply (None: unknown). Newer
    CLIs keep an interrupted reply's partial text, older ones drop it; sending it to a session
    that has it would show the model its own words twice. Spacing is not compared: the document
    may wrap or trim what the CLI streamed.
    """
    if unfinished is None or session_reply is None:
        return unfinished
    if _squashed(unfinished) in _squashed(session_reply):
        return None
    return unfinished


def transcript_after_turn(known: str, doc: Document, turn: int) -> str:
    """``known`` (turns before ``turn``) followed by exchange ``turn`` as ``doc`` shows it.

    The earlier turns are taken from what the model was told when the turn started, not from
    ``doc``: an edit made to them while the reply streamed is still news to the model.
    """
    # Only the one exchange is rendered: the earlier ones of a long conversation are not.
    exchange = doc.transcript(turn, since=turn - 1)
    return "\n\n".join(part for part in (known, exchange) if part)


def record_turn(
    document: Path, known: str, turn: int, session: str | None, doc: Document | None = None
) -> None:
    """Keep the snapshot of the conversation as it stands at the end of ``turn`` (``doc``,
    when the caller has already read it)."""
    if doc is None:
        try:
            doc = parse(read_text(document))
        except (AgentdocError, DocumentError, FrontmatterError) as exc:
            log.warning("%s: no history snapshot for turn %d: %s", document, turn, exc)
            return
    write_snapshot(document, Snapshot(session, turn, transcript_after_turn(known, doc, turn)))
