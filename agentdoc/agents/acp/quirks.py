"""What individual agents do beyond the protocol, as data: one table row per agent.

An agent is found by the name it gives itself in ``initialize`` (``agentInfo.name``), so a user's
own command for the same agent gets the same treatment. The client applies every row the same
way; nothing else in the package names an agent. Observed with the versions in
``agents-acp.md``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from agentdoc.agents.acp.store import GEMINI_STORE, MinuteNamedStore


@dataclass(frozen=True, slots=True)
class Quirks:
    # Decorations an agent puts at the start of every thought chunk, dropped.
    thought_prefix: re.Pattern[str] | None = None
    # The agent trims every thought chunk it sends, so the space (or paragraph break, before a
    # titled thought) between two chunks must be put back.
    thought_trimmed: bool = False
    # Whole message chunks that are the agent talking about itself, not reply text.
    message_noise: re.Pattern[str] | None = None
    # A `session_info_update` field (its path) whose value says the turn failed, where the
    # agent still ends the prompt `end_turn` and sends the API's error as message text.
    failed_status: tuple[tuple[str, ...], str] | None = None
    # The agent answers `session/load` before it has sent the replay of the history, so the
    # replay would land in the turn: one more round trip (re-setting its current mode) first.
    late_replay: bool = False
    # The agent's `session/load` erases a session stored in the same minute it was created
    # (see store.py): its files are renamed out of the way before each load.
    minute_named_store: MinuteNamedStore | None = None
    # A line of the agent's stderr saying an API request failed, which it tells no ACP client:
    # groups `session` (the session's id) and `error` (what failed). A retry at once, or
    # (with `retry_next`) once the agent's next request follows.
    retry_log: re.Pattern[str] | None = None
    # The log line of the agent's next request in a session (group `session`): a failure
    # `retry_log` names is a retry once it comes. The agent logs every failed request alike,
    # and one it does not retry (a 400) ends the turn instead.
    retry_next: re.Pattern[str] | None = None
    # The agent keeps the text of a reply cut short by a cancel in its own session (it answers
    # `cancelled` and a later turn resumes it with that text), so it is not sent again. Without
    # this row agentdoc assumes it was dropped, and sends it (twice is better than never).
    keeps_interrupted: bool = False
    # Whole message chunks that are the agent's notices about retrying a failed API request,
    # sent as reply text: a match with a `retry` group says it tries again, any other match that
    # it stopped. A turn that ends with no reply text after them failed every try.
    retry_text: re.Pattern[str] | None = None
    # The agent ends a turn whose API request failed `end_turn`, saying nothing: a turn with
    # neither reply text nor a tool call failed.
    silent_failure: bool = False


NONE = Quirks()

QUIRKS: dict[str, Quirks] = {
    # Gemini CLI wraps each thought chunk as "**{subject}**\n{description}"; with no subject
    # that is an empty bold title. Choosing an "always" option makes it announce its new
    # approval mode as reply text ("[MODE_UPDATE] autoEdit").
    "gemini-cli": Quirks(
        thought_prefix=re.compile(r"\A\*\*\*\*\n"),
        thought_trimmed=True,
        late_replay=True,
        minute_named_store=GEMINI_STORE,
        message_noise=re.compile(r"\A\[MODE_UPDATE\] \S+\s*\Z"),
    ),
    # codex-acp 2 ends a turn whose API request failed `end_turn`, after a `systemError` thread
    # status, with the API's error body (JSON) as the reply's text.
    "@agentclientprotocol/codex-acp": Quirks(
        failed_status=(("_meta", "codex", "threadStatus", "type"), "systemError"),
    ),
    # Qwen Code keeps an interrupted reply in its session (0.24.4); pi (pi-acp) drops it.
    "qwen-code": Quirks(keeps_interrupted=True),
    # pi-acp 0.0.34 sends pi's retry notices as reply text ("Retrying (attempt 1/3, waiting
    # 2s)...", then "Retry finished, resuming." whether the last try worked or not) and ends a
    # failed request `end_turn`.
    "pi-acp": Quirks(
        retry_text=re.compile(
            r"\A\s*(?:(?P<retry>Retrying \(attempt \d+(?:/\d+)?[^)]*\)\.*)"
            r"|Retry finished, resuming\.?)\s*\Z"
        ),
        silent_failure=True,
    ),
    # OpenCode retries 429s and 5xx for as long as a minute with nothing over ACP (its bridge
    # forwards no retry status); its log (on stderr, see LOG_ENV) has a line per failed try.
    "OpenCode": Quirks(
        retry_log=re.compile(
            # Not the title request it makes beside the turn's (`small=true`).
            r'(?!.*\bsmall=true\b)message="stream error" .*?\bsession\.id=(?P<session>\S+) .*?'
            r'\berror\.error="(?:AI_\w+: )?(?P<error>[^"]*)"'
        ),
        retry_next=re.compile(
            r"(?!.*\bsmall=true\b)\bmessage=stream .*?\bsession\.id=(?P<session>\S+)"
        ),
    ),
}


# Agents that take the user's permission policy in their environment at start, by program name
# (a user's own entry for the same program too). OpenCode has no asking mode over ACP (only
# build and plan) but merges OPENCODE_PERMISSION (JSON) over its config's `permission`.
_ASK = '{"edit": "ask", "bash": "ask"}'
POLICY_ENV: dict[str, dict[str, dict[str, str]]] = {
    "opencode": {
        "default": {"OPENCODE_PERMISSION": _ASK},
        "acceptEdits": {"OPENCODE_PERMISSION": '{"edit": "allow", "bash": "ask"}'},
        "bypassPermissions": {"OPENCODE_PERMISSION": '{"edit": "allow", "bash": "allow"}'},
    },
}


# What an agent's environment gets by program name (unless the user's entry sets it): OpenCode
# writes its log to stderr, where agentdoc reads its retries (Quirks.retry_log).
LOG_ENV: dict[str, dict[str, str]] = {"opencode": {"OPENCODE_PRINT_LOGS": "1"}}


def log_env(command: Sequence[str]) -> dict[str, str]:
    program = PurePath(command[0]).name if command else ""
    return dict(LOG_ENV.get(program, {}))


def policy_env(command: Sequence[str], policy: str) -> dict[str, str]:
    """What the agent's environment gets so it follows `policy` ({}: set it another way)."""
    program = PurePath(command[0]).name if command else ""
    return dict(POLICY_ENV.get(program, {}).get(policy, {}))


def quirks_for(agent_name: str | None) -> Quirks:
    return QUIRKS.get(agent_name or "", NONE)


def clean_thought(text: str, quirks: Quirks) -> str:
    if quirks.thought_prefix is None:
        return text
    return quirks.thought_prefix.sub("", text, count=1)


def is_noise(text: str, quirks: Quirks) -> bool:
    return quirks.message_noise is not None and quirks.message_noise.match(text) is not None


def retry_notice(text: str, quirks: Quirks) -> bool | None:
    """Whether a message chunk is a retry notice (see `Quirks.retry_text`): True for one that
    says the agent tries again, False for one that says it stopped, None for reply text."""
    found = quirks.retry_text.match(text) if quirks.retry_text is not None else None
    if found is None:
        return None
    return found.group("retry") is not None


def says_failed(update: dict[str, object], quirks: Quirks) -> bool:
    """Whether a `session_info_update` says the turn failed (see `Quirks.failed_status`)."""
    if quirks.failed_status is None:
        return False
    path, value = quirks.failed_status
    found: object = update
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    return found == value


def thought_joint(before: str, text: str, quirks: Quirks) -> str:
    """What goes between the thought so far and its next chunk (see `thought_trimmed`)."""
    if not quirks.thought_trimmed or not before or before[-1].isspace() or text[:1].isspace():
        return ""
    return "\n\n" if text.startswith("**") else " "
