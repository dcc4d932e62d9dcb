"""What the Claude Code CLI's error texts mean: a failure kind with Claude's own advice.

The texts are the CLI's (they change between versions); the common patterns in
``agents.base`` cover what every agent says alike.
"""

from __future__ import annotations

import re

from agentdoc.agents.base.failure import Failure, classify_with

_CLAUDE: tuple[tuple[re.Pattern[str], Failure], ...] = (
    (
        re.compile(r"Invalid API key|authentication_(?:error|failed)|API Error: 401\b|OAuth token"),
        Failure("auth", "Log in with `claude /login`, or set ANTHROPIC_API_KEY to a valid key."),
    ),
    (
        # Claude Code 2.1.197 says "Unable to connect to API (ConnectionRefused)", 2.1.330
        # "Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)".
        re.compile(
            r"Unable to connect|Connection (?:to the API was lost|refused)"
            r"|ECONN|ETIMEDOUT|ENOTFOUND"
        ),
        Failure(
            "network",
            "Check your network connection (and ANTHROPIC_BASE_URL or proxy settings, if set).",
        ),
    ),
    (
        re.compile(r"maximum number of turns", re.I),
        Failure("tool_rounds", "Claude used up its rounds of tool use; ask it to continue."),
    ),
    (
        re.compile(r"^error: (?:unknown|unexpected|missing|too many)|^Usage: ", re.I | re.M),
        Failure(
            "rejected_command",
            "The Claude Code CLI rejected agentdoc's command line: check that `claude --version` "
            "is a version agentdoc supports (2.1 or later).",
        ),
    ),
)


def classify(error: str) -> Failure | None:
    """The failure a Claude CLI error text describes (None: its text says enough)."""
    return classify_with(error, _CLAUDE)
