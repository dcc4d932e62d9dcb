"""The one user-facing error type, and the exit codes the CLI maps errors to."""

from __future__ import annotations

from pathlib import Path

EXIT_USER_ERROR = 1
EXIT_TURN_FAILED = 2
EXIT_UNEXPECTED = 3
EXIT_INTERRUPTED = 130


class AgentdocError(Exception):
    """Something the user can fix; the message says what happened and what to do."""


class NoPendingPrompt(AgentdocError):
    pass


class AgentCannotStart(AgentdocError):
    """An agent that is missing, will not start or fails its handshake: the turn never ran, so
    its prompt stays pending."""


class AgentNotFound(AgentCannotStart):
    """The agent's program is not installed where agentdoc looks, or cannot be run."""


class PromptRefused(AgentdocError):
    """What the prompt carries cannot be sent (a file outside the allowed folders, a picture
    for an agent that takes none); nothing was sent, and the prompt stays pending."""


class DocumentGone(AgentdocError):
    """The document was deleted or moved while a turn was writing to it."""


def require_existing(path: Path) -> None:
    """One message for a mistyped path, whichever command got it."""
    if not path.exists() and not path.is_symlink():
        raise AgentdocError(f"{path}: no such file")
