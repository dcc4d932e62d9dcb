"""Parse a session document into its settings and its ``## User`` / ``## Assistant`` turns.

Everything here is pure: text in, values out. Turn headings are found by a real CommonMark parse
(markdown-it-py) of the body, so a heading inside a fence, an HTML block, an indented code block,
a blockquote or a list is just text. The frontmatter boundary is decided once, by
:func:`agentdoc.document.frontmatter.split`, and only the body is handed to markdown-it: the
settings and the turns can then never disagree about where the frontmatter ends (markdown-it's
front matter rule, for one, does not see a fence after a BOM). A later parse of the same
document re-parses only what changed since the last top-level turn heading (see
:mod:`agentdoc.document.headings`).

The same parse guards the other direction: :mod:`agentdoc.document.seal` makes sure model text
written into the document can never forge a turn heading on the next parse. HTML comments, which
a prompt does not send, are :mod:`agentdoc.document.comments`' part.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from agentdoc.document import frontmatter, headings
from agentdoc.document.comments import strip_comments
from agentdoc.document.frontmatter import LINE_BREAK, FrontmatterError, Split, line_starts
from agentdoc.errors import allowed

logger = logging.getLogger(__name__)

Role = headings.Role
_LABEL: dict[Role, str] = {"user": "User", "assistant": "Assistant"}

# A session id as agents make them (most: UUIDs; some: `ses_…`): never a
# path or a flag, since it names a file in an agent's store and rides in an argv.
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
# The first character can never be "-", so a model name can never be read as a CLI flag.
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\[\]/-]{0,127}")
# The footer line agentdoc writes under each reply: bookkeeping, not conversation.
_FOOTER = re.compile(r"\n?[ \t]*<sub>[^\n]*</sub>[ \t]*\Z")
# First line of an `## Assistant` block that only reports a failure: the turn failed before any
# reply text, so its prompt is still pending, and the next attempt replaces the block.
UNANSWERED_MARK = "<!-- agentdoc:unanswered -->"
# The lines such a block may hold besides the mark: the callout and the footer.
_NOTICE_LINE = re.compile(r"[ ]{0,3}(?:>.*|<sub>.*</sub>[ \t]*)?")


class AgentdocMeta(BaseModel):
    """The validated ``agentdoc:`` settings of a document; unknown keys are kept, not used."""

    model_config = ConfigDict(extra="allow", frozen=True)

    # The agent's session id; agentdoc writes it after the first reply.
    session: str | None = None
    # --model for the CLI: an alias (sonnet) or a full model name.
    model: str | None = None
    # --effort for the CLI.
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    # Appended to the agent's system prompt.
    system: str | None = None
    # Where the CLI runs; relative to the document's folder; default that folder.
    cwd: str | None = None
    # When an edit becomes a prompt: on every settled save, or only with the submit marker.
    trigger: Literal["save", "marker"] | None = None
    # Write the thinking sidecar (None means the default: yes).
    thinking: bool | None = None
    # Lineage of a fork: {document, session, turn} of the parent.
    forked_from: dict[str, Any] | None = None
    # The agent that answers: a name from the user's config (default: the config's `agent`).
    agent: str | None = None
    # The agent whose session `session` is (written with it; absent: the agent's whose sessions
    # were recorded before any other's, agents.LEGACY_AGENT).
    session_agent: str | None = None
    # Set by `undo`: the next prompt continues `session` from this point of it (the agent's id
    # of the end of the turn before the undone one); removed once that turn has a reply.
    resume_at: str | None = None
    # Commit the document to git after every completed turn ("commit"), also pull before and
    # push after it ("sync"), or not ("off").
    git: Literal["commit", "sync", "off"] | None = None
    # Exchanges `agentdoc archive` moved into `<stem>.archive.md`; turn numbers count them.
    archived: int | None = None
    # A preset (`presets/NAME.md` beside the user's config) whose settings this document takes
    # where it sets none itself.
    preset: str | None = None

    @field_validator("archived")
    @classmethod
    def _a_count(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError("must be the number of archived exchanges (0 or more)")
        return value

    @field_validator("session", "resume_at")
    @classmethod
    def _session_is_an_id(cls, value: str | None) -> str | None:
        if value is not None and not _SESSION.fullmatch(value):
            raise ValueError(
                "must be a session id as agents make them (a UUID, or letters, digits, _ "
                "and -, not starting with -)"
            )
        return value

    @field_validator("agent", mode="before")
    @classmethod
    def _agent_as_written(cls, value: object) -> object:
        # Whether this names a known agent depends on the user's config, so the check (and its
        # message listing the known names) happens when the turn resolves it; a list or a
        # number is kept as written so that check refuses it too.
        return value if value is None or isinstance(value, str) else repr(value)

    @field_validator("model")
    @classmethod
    def _model_is_a_name(cls, value: str | None) -> str | None:
        if value is not None and not _MODEL.fullmatch(value):
            raise ValueError(
                "must be a model name or alias such as `sonnet` (letters, digits and . _ : / - [ ],"
                " not starting with -)"
            )
        return value


class DocumentError(ValueError):
    """The file is not a usable session document; the message is meant for the user."""


@dataclass(frozen=True)
class Turn:
    """One ``## User`` or ``## Assistant`` block; offsets index the whole document text."""

    role: Role
    heading_line: int
    start: int
    end: int
    content_start: int
    content: str


@dataclass(frozen=True)
class Document:
    """A parsed session document."""

    text: str
    meta: AgentdocMeta
    split: Split
    turns: tuple[Turn, ...]
    preamble_end: int

    def last_user(self) -> Turn | None:
        return next((t for t in reversed(self.turns) if t.role == "user"), None)

    def unanswered(self) -> Turn | None:
        """The last block, if it is a failure notice standing in for a reply (see below)."""
        last = self.turns[-1] if self.turns else None
        return last if last is not None and is_unanswered(last) else None

    def pending_turn(self) -> Turn | None:
        """The user block whose prompt waits for a reply.

        That is the last block if it is a user block, or the one before a trailing failure
        notice: a turn that failed before any reply text leaves its prompt pending.
        """
        turns = self.turns[:-1] if self.unanswered() is not None else self.turns
        if not turns or turns[-1].role != "user":
            return None
        return turns[-1]

    def pending_prompt(self) -> str | None:
        """The text of the pending prompt, if it is not empty (comments do not count)."""
        turn = self.pending_turn()
        if turn is None:
            return None
        return strip_comments(turn.content).strip() or None

    def turn_count(self) -> int:
        """Completed exchanges, counted as assistant blocks (failure notices do not count),
        plus those moved to the archive: turn numbers go on from the first exchange ever."""
        return (self.meta.archived or 0) + self._local_count()

    def _local_count(self) -> int:
        return sum(1 for t in self.turns if t.role == "assistant" and not is_unanswered(t))

    def transcript(self, upto: int | None = None, *, since: int = 0) -> str:
        """Plain-text history of the first ``upto`` exchanges (all completed ones if None),
        leaving out the first ``since`` of them. Archived exchanges are not in this text:
        numbers count them, the text starts after them."""
        offset = self.meta.archived or 0
        limit = (self.turn_count() if upto is None else upto) - offset
        since = max(since - offset, 0)
        parts: list[str] = []
        replies = 0
        for turn in self.turns:
            if replies >= limit:
                break
            if is_unanswered(turn):
                continue
            if replies < since:
                replies += turn.role == "assistant"
                continue
            text = _transcript_text(turn)
            if text:
                parts.append(f"{_LABEL[turn.role]}: {text}")
            replies += turn.role == "assistant"
        return "\n\n".join(parts)


def is_unanswered(turn: Turn) -> bool:
    """An `## Assistant` block holding only agentdoc's failure notice: the mark, a callout, a
    footer. Anything else typed into it makes it an answer like any other."""
    if turn.role != "assistant" or UNANSWERED_MARK not in turn.content:
        return False  # the usual answer, found without splitting a long reply into lines
    lines = [line for line in LINE_BREAK.split(turn.content) if line.strip()]
    return (
        bool(lines)
        and lines[0].strip() == UNANSWERED_MARK
        and all(_NOTICE_LINE.fullmatch(line) for line in lines[1:])
    )


def _transcript_text(turn: Turn) -> str:
    text = strip_comments(turn.content)
    if "\r" in text:
        text = LINE_BREAK.sub("\n", text)
    text = text.strip()
    if turn.role == "assistant":
        # The footer can only be the last line: look there, not at every offset of a long reply.
        footer = _FOOTER.search(text, max(text.rfind("\n"), 0))
        text = text[: footer.start()].rstrip() if footer else text
    return text


def parse_blocks(markdown: str) -> list[Token]:
    return headings.parse_blocks(markdown)


def turn_headings(markdown: str) -> list[tuple[int, Role]]:
    """0-based line and role of every top-level ``## User`` / ``## Assistant`` ATX heading."""
    return [(h.line, h.role) for h in headings.full_scan(markdown)]


def _find_turns(text: str, parts: Split) -> tuple[Turn, ...]:
    base = parts.body_offset
    base_line = len(line_starts(text[:base])) - 1
    # Cached: a save that changed only the end of a long conversation re-parses only the end.
    heads = headings.scan(parts.body)
    turns: list[Turn] = []
    for index, head in enumerate(heads):
        start = base + head.offset
        end = base + heads[index + 1].offset if index + 1 < len(heads) else len(text)
        after = LINE_BREAK.search(text, start)
        content_start = after.end() if after else len(text)
        turn = Turn(
            head.role, base_line + head.line, start, end, content_start, text[content_start:end]
        )
        turns.append(turn)
    return tuple(turns)


def _describe(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in (frontmatter.META_KEY, *item["loc"]))
        message = allowed(item["type"], item.get("ctx"), item["msg"])
        shown = repr(item["input"])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        problems.append(f"`{where}` {message} (got {shown})")
    return "bad settings in the frontmatter: " + "; ".join(problems)


def _meta(text: str) -> AgentdocMeta:
    try:
        raw = frontmatter.read_meta(text)
    except FrontmatterError as exc:
        raise DocumentError(str(exc)) from exc
    if raw is None:
        raise DocumentError(
            "not a session document: its frontmatter has no `agentdoc:` mapping"
            " (run `agentdoc new` or add `agentdoc: {}` to the frontmatter)"
        )
    try:
        return AgentdocMeta.model_validate(raw)
    except ValidationError as exc:
        raise DocumentError(_describe(exc)) from exc


def parse(text: str) -> Document:
    """Parse a session document; DocumentError if it is not one or its settings are bad."""
    return _parse(text, _meta(text))


def parsed_or_none(text: str) -> Document | None:
    """`parse`, or None where the text is no readable session document (for a caller to whom
    such a version means only "nothing to find here")."""
    try:
        return parse(text)
    except (DocumentError, FrontmatterError):
        return None


def parse_archive(text: str) -> Document:
    """Parse a document's archive: turns like a session document, no settings of its own."""
    return _parse(text, AgentdocMeta())


def _parse(text: str, meta: AgentdocMeta) -> Document:
    parts = frontmatter.split(text)
    turns = _find_turns(text, parts)
    preamble_end = turns[0].start if turns else len(text)
    return Document(text, meta, parts, turns, preamble_end)


_OPT_IN_LINE = re.compile(rf"^{frontmatter.META_KEY}\s*:", re.MULTILINE)


def session_problem(text: str) -> str | None:
    """Why a document whose frontmatter has an ``agentdoc:`` line cannot be read, or None.

    Such a file means to be a session document (it may have been answered a minute ago), so
    a broken frontmatter (``title: [oops``) is the person's to hear about, not a note to skip.
    """
    yaml_text = frontmatter.split(text).frontmatter
    if yaml_text is None or not _OPT_IN_LINE.search(yaml_text):
        return None
    try:
        _meta(text)
    except (DocumentError, FrontmatterError) as exc:
        return str(exc)
    return None


def is_session_document(text: str) -> bool:
    """Whether ``text`` opts in with an ``agentdoc`` mapping; never raises."""
    head = text.removeprefix(frontmatter.BOM)
    if not head.startswith("---") or frontmatter.META_KEY not in text:
        return False
    try:
        return frontmatter.read_meta(text) is not None
    except FrontmatterError:
        return False
