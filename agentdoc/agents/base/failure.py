"""What kind of failure ended a turn, and what the person can do about it.

Each protocol classifies its own error texts (the words differ per agent and per version);
the document shows the advice that comes with the kind and never reads the error text itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

FailureKind = Literal[
    "auth",  # the login or API key was refused
    "rate_limit",
    "network",  # the API could not be reached
    "stalled",  # the agent said nothing for too long (agentdoc's own stall timeout)
    "tool_rounds",  # the agent used up the rounds of tool use it is allowed
    "too_long",  # the conversation no longer fits the model
    "rejected_command",  # the agent's program refused agentdoc's command line
]


@dataclass(frozen=True, slots=True)
class Failure:
    """A failure's kind and the advice to show with it (None: the error says enough)."""

    kind: FailureKind
    advice: str | None = None


STALLED = Failure(
    "stalled", "If replies can pause this long, raise `stall_timeout` in the agentdoc config."
)

# What any agent's API errors look like, first match wins; a protocol tries its own first.
# Errors whose own text already says what to do (500, 529: "try again in a moment") have none.
_COMMON: tuple[tuple[re.Pattern[str], Failure], ...] = (
    (
        re.compile(r"(?<![:.])\b401\b|unauthori[sz]ed|authentication|invalid api key", re.I),
        Failure("auth", "Log the agent in again, or give it a valid API key."),
    ),
    (
        re.compile(r"\(429\)|API Error: 429\b|\b429 Too Many|rate[ _]?limit", re.I),
        Failure(
            "rate_limit", "The API is rate limiting you: wait a minute or two before retrying."
        ),
    ),
    (
        re.compile(
            r"Unable to connect|Connection (?:to the API was lost|refused)"
            r"|ECONN|ETIMEDOUT|ENOTFOUND"
        ),
        Failure(
            "network",
            "Check your network connection (and the agent's API address or proxy settings, "
            "if set).",
        ),
    ),
    (re.compile(r"stall timeout"), STALLED),
    (
        re.compile(r"prompt is too long|request_too_large|API Error: 413\b", re.I),
        Failure(
            "too_long",
            "The conversation is too long for the model: fork it at an earlier turn "
            "(`agentdoc fork`) or start a new document.",
        ),
    ),
)


def classify_with(
    error: str, table: tuple[tuple[re.Pattern[str], Failure], ...] = ()
) -> Failure | None:
    """The failure ``error`` describes: a protocol's own ``table`` first, then the common one."""
    return next((failure for pattern, failure in (*table, *_COMMON) if pattern.search(error)), None)
