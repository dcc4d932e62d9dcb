"""What an agent's sessions can be set to, as it last said, remembered on this machine.

An ACP agent lists its modes and options only when it opens a session, so `agentdoc status`
cannot ask without starting it (and spending time, or the user's account). `agentdoc doctor` and
every session a turn opens remember what the agent offered, per agent and command, under the
user's state folder; `status` reads that. A changed command makes the record stale: it may be
another program.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from agentdoc.userstate import user_state_dir

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Offer:
    """What one agent's sessions can be set to, by what it sets (mode, model, effort…)."""

    options: dict[str, list[str]]
    policy_note: str | None = None  # None: the agent has a mode for the user's permission_mode
    auth_methods: tuple[str, ...] = field(default=())  # how it says one logs in
    # What each of its modes lets it do unasked, read from its own words (by mode id): the
    # policy's mode is chosen from these again whatever the policy is when they are read.
    stances: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        shown = "; ".join(f"{what}: {', '.join(values)}" for what, values in self.options.items())
        return shown or "no modes or options"


@dataclass(frozen=True, slots=True)
class Remembered:
    offer: Offer
    seen: str  # when the agent said it (ISO 8601, UTC)


def _record_path(name: str, environ: Mapping[str, str] | None) -> Path:
    # `name` is a configured agent's name (config.AGENT_NAME): a plain file name.
    return user_state_dir(environ) / "agents" / f"{name}.json"


def remember(
    name: str, command: Sequence[str], offer: Offer, environ: Mapping[str, str] | None = None
) -> None:
    """Keep what ``name`` offered (best effort: a read-only state folder only loses the hint)."""
    path = _record_path(name, environ)
    record = {
        "command": list(command),
        "options": offer.options,
        "policy_note": offer.policy_note,
        "stances": offer.stances,
        "seen": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(record, indent=2), encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        log.debug("cannot remember what %s offers in %s: %s", name, path, exc)


def recall(
    name: str, command: Sequence[str], environ: Mapping[str, str] | None = None
) -> Remembered | None:
    """What ``name`` last offered when started with ``command``; None when unknown."""
    with contextlib.suppress(OSError, ValueError):
        record = json.loads(_record_path(name, environ).read_text(encoding="utf-8"))
        if isinstance(record, dict) and record.get("command") == list(command):
            return _parsed(record)
    return None


def _parsed(record: dict[str, object]) -> Remembered | None:
    options = record.get("options")
    seen = record.get("seen")
    if not isinstance(options, dict) or not isinstance(seen, str):
        return None
    kept = {
        str(what): [str(v) for v in values]
        for what, values in options.items()
        if isinstance(values, list)
    }
    note = record.get("policy_note")
    stances = record.get("stances")
    meanings = (
        {str(mode): str(stance) for mode, stance in stances.items()}
        if isinstance(stances, dict)
        else {}
    )
    return Remembered(Offer(kept, note if isinstance(note, str) else None, stances=meanings), seen)
