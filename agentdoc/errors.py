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


class NotLoggedIn(AgentCannotStart):
    """The agent says it has no credentials to call its model with."""

    def __init__(self, message: str, said: str, methods: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.said = said  # the agent's own words
        self.methods = methods  # the ways to log in the agent offers (may be none)


class PromptRefused(AgentdocError):
    """What the prompt carries cannot be sent (a file outside the allowed folders, a picture
    for an agent that takes none); nothing was sent, and the prompt stays pending."""


class ReadOnlyDocument(AgentdocError):
    """The document's mode refuses agentdoc's writes; a `chmod` making it writable is the fix."""


class DocumentGone(AgentdocError):
    """The document was deleted or moved while a turn was writing to it."""


def require_existing(path: Path) -> None:
    """One message for a mistyped path, whichever command got it."""
    if not path.exists() and not path.is_symlink():
        raise AgentdocError(f"{path}: no such file")


# What a setting that fails validation is told, in agentdoc's words rather than the validator's
# ("Input should be ..."): what the key allows. Keyed by the validator's error type.
_ALLOWED = {
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "string_type": "must be text",
    "dict_type": "must be a mapping of keys to values",
    "model_type": "must be a mapping of keys to values",
    "list_type": "must be a list",
    "extra_forbidden": "is not a setting agentdoc knows",
    "missing": "is required",
}
_BOUNDS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "string_too_short": "must be at least {min_length} characters long",
    "string_too_long": "must be at most {max_length} characters long",
}


def allowed(kind: str, ctx: dict[str, object] | None, fallback: str) -> str:
    """What a setting whose validation failed with error `kind` (and context `ctx`) allows."""
    ctx = ctx or {}
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])  # our own validators' messages are written for people
    if kind == "literal_error" and "expected" in ctx:
        return f"must be one of {ctx['expected']}"
    if kind in _BOUNDS:
        try:
            return _BOUNDS[kind].format(**ctx)
        except KeyError:
            pass
    return _ALLOWED.get(kind, f"is not allowed here ({fallback[:1].lower()}{fallback[1:]})")
