"""What a turn's prompt carries besides the prompt: the context its session lacks (pure)."""

from __future__ import annotations

import re


def _fence(text: str) -> str:
    # Longer than any backtick run inside, so no line of the diff can close the fence early.
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def compose_prompt(
    prompt: str,
    *,
    transcript: str | None = None,
    edits: str | None = None,
    unfinished: str | None = None,
) -> str:
    """The text sent to the CLI: the prompt, with whatever context the session lacks."""
    if transcript:
        return (
            "This conversation continues one that was kept in a document; your earlier session "
            "is not available. Here is the conversation so far, for context:\n\n"
            f"<transcript>\n{transcript}\n</transcript>\n\n"
            f"Reply to this new message:\n\n{prompt}"
        )
    parts: list[str] = []
    if edits:
        fence = _fence(edits)
        parts.append(
            "The user edited earlier parts of this conversation since your last reply; the "
            f"document now reads differently from what you remember:\n\n{fence}diff\n{edits}\n"
            f"{fence}"
        )
    if unfinished:
        parts.append(
            "Your previous answer was interrupted; it is not in your history, but the user saw "
            f"it up to this point:\n\n<partial-answer>\n{unfinished}\n</partial-answer>"
        )
    if not parts:
        return prompt
    return "\n\n".join([*parts, f"Reply to this new message:\n\n{prompt}"])
