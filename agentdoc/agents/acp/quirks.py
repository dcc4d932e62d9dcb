"""What individual agents do beyond the protocol, as data: one table row per agent.

An agent is found by the name it gives itself in ``initialize`` (``agentInfo.name``), so a user's
own command for the same agent gets the same treatment. The client applies every row the same
way; nothing else in the package names an agent. Observed with the versions in
``agents-acp.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Quirks:
    # Decorations an agent puts at the start of every thought chunk, dropped.
    thought_prefix: re.Pattern[str] | None = None
    # Whole message chunks that are the agent talking about itself, not reply text.
    message_noise: re.Pattern[str] | None = None


NONE = Quirks()

QUIRKS: dict[str, Quirks] = {
    # Gemini CLI wraps each thought chunk as "**{subject}**\n{description}"; with no subject
    # that is an empty bold title. Choosing an "always" option makes it announce its new
    # approval mode as reply text ("[MODE_UPDATE] autoEdit").
    "gemini-cli": Quirks(
        thought_prefix=re.compile(r"\A\*\*\*\*\n"),
        message_noise=re.compile(r"\A\[MODE_UPDATE\] \S+\s*\Z"),
    ),
}


def quirks_for(agent_name: str | None) -> Quirks:
    return QUIRKS.get(agent_name or "", NONE)


def clean_thought(text: str, quirks: Quirks) -> str:
    if quirks.thought_prefix is None:
        return text
    return quirks.thought_prefix.sub("", text, count=1)


def is_noise(text: str, quirks: Quirks) -> bool:
    return quirks.message_noise is not None and quirks.message_noise.match(text) is not None
