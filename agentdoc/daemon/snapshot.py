"""A settled save, read once: the one value everything downstream of the watch looks at.

Before, each step of the daemon read, decoded, hashed or parsed the file again for what it
needed. Here the bytes are read once and what the loop decides by is taken from them: the
digest, whether agentdoc wrote them, the decoded text, and (on first use, cached) the parsed
document, its settings problem and its pending prompt. The few looks that need the disk or
git beyond the file itself are taken when it is built (`capture.py`), so this value, and
`classify` deciding by it, do no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.daemon.prompts import submitted
from agentdoc.document import (
    Document,
    DocumentError,
    FrontmatterError,
    decode,
    is_session_document,
    parse,
    session_problem,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import open_regions
from agentdoc.turn import sync_on


@dataclass(frozen=True)
class Snapshot:
    """One version of one file as the daemon saw it. `data` is None when it was not read:
    the file is gone, git holds the tree, or it is still the running turn's own write."""

    path: Path
    settings: Settings
    data: bytes | None = None
    digest: str | None = None
    git_busy: bool = False
    turn_stamp: bool = False  # untouched since the running turn's own streamed write
    own_content: bool = False  # bytes agentdoc itself wrote (the write ledger says so)
    own_command: str | None = None  # the agentdoc command (`undo`, `archive`) that wrote it
    git_wrote: bool = False  # a checkout/stash/reset/pull wrote this very version
    # What `undo`/`archive` wrote over the version last handled, when this save came after it
    # (maybe before its event was taken in): the conversation this save was made from.
    own_base: str | None = None

    @property
    def gone(self) -> bool:
        return self.data is None and not self.git_busy and not self.turn_stamp

    @cached_property
    def loose_text(self) -> str:
        """The text with undecodable bytes replaced: enough to remember, never to send."""
        return (self.data or b"").decode("utf-8", "replace")

    @cached_property
    def maybe_session(self) -> bool:
        # Cheap pre-check before decoding: session documents start with frontmatter.
        return self.data is not None and self.data.lstrip(b"\xef\xbb\xbf").startswith(b"---")

    @cached_property
    def _decoded(self) -> tuple[str | None, str | None]:
        try:
            return decode(self.path, self.data or b""), None
        except AgentdocError as exc:
            return None, str(exc)

    @property
    def text(self) -> str | None:
        """The text as UTF-8; None if it is not (`decode_problem` says why)."""
        return self._decoded[0]

    @property
    def decode_problem(self) -> str | None:
        return self._decoded[1]

    @cached_property
    def session(self) -> bool:
        return self.text is not None and is_session_document(self.text)

    @cached_property
    def session_problem(self) -> str | None:
        """Why a file that means to be a session document is not one, if it is not."""
        return None if self.text is None else session_problem(self.text)

    @cached_property
    def _parsed(self) -> tuple[Document | None, str | None]:
        if self.text is None:
            return None, self.decode_problem
        try:
            return parse(self.text), None
        except (DocumentError, FrontmatterError) as exc:
            return None, str(exc)

    @property
    def document(self) -> Document | None:
        return self._parsed[0]

    @property
    def settings_problem(self) -> str | None:
        """Why its frontmatter or `agentdoc:` settings cannot be used, if they cannot."""
        return self._parsed[1]

    @cached_property
    def _submission(self) -> tuple[bool, str | None]:
        if self.document is None:
            return False, None
        return submitted(self.document, self.settings)

    @property
    def marker(self) -> bool:
        return self._submission[0]

    @property
    def prompt(self) -> str | None:
        """The prompt this version submits under the settings, detected once."""
        return self._submission[1]

    @property
    def git_sync(self) -> bool:
        """The document asks for `git: sync`: git carries it between machines."""
        return self.document is not None and sync_on(self.document, self.settings)

    @cached_property
    def open_reply(self) -> bool:
        """A reply region still marked as streaming (a turn that never closed it)."""
        return self.text is not None and bool(open_regions(self.text))
