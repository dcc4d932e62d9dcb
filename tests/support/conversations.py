"""Whole conversations as document text, for search, archive and history."""

from __future__ import annotations


def conversation(pairs: list[tuple[str, str]], archived: int = 0, nl: str = "\n") -> str:
    meta = f"{{archived: {archived}}}" if archived else "{}"
    lines = ["---", f"agentdoc: {meta}", "---", "", "# Chat", ""]
    for prompt, reply in pairs:
        lines += ["## User", "", prompt, "", "## Assistant", "", reply, "", "<sub>footer</sub>", ""]
    lines += ["## User", ""]
    return nl.join(lines) + nl


SESSION = "1c0e5d6a-0000-4000-8000-000000000001"


def numbered_conversation(exchanges: int, nl: str = "\n", pending: str = "") -> str:
    """`exchanges` numbered questions and answers in session SESSION, and an empty prompt."""
    head = f"---{nl}title: Long{nl}agentdoc:{nl}  session: {SESSION}{nl}---{nl}{nl}# Long{nl}{nl}"
    turns = "".join(
        f"## User{nl}{nl}Question {n}?{nl}<!-- note {n} -->{nl}{nl}"
        f"## Assistant{nl}{nl}Answer {n}.{nl}{nl}<sub>sonnet · 1 s</sub>{nl}{nl}"
        for n in range(1, exchanges + 1)
    )
    return f"{head}{turns}## User{nl}{nl}{pending}"
