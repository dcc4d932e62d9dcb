"""Keeping an agent's stored session loadable where its `session/load` would erase it.

Gemini CLI (0.61; reported upstream as google-gemini/gemini-cli#28693) keeps each session in
``<home>/.gemini/tmp/<project>/chats/session-<UTC minute>-<first 8 of the id>.jsonl``, appending
records. Its `session/load` starts a new recording of the session it loads *before* reading it,
in a file named by the current minute: when the session was created in that same minute, the
new recording goes into the session's own file, its checkpoint replaces the conversation, and
the load answers "No previous sessions found for this project" (the conversation is then lost
for good). A one-shot `agentdoc run` starts a new process per turn, usually within a minute of
the last, so every turn used to start a new session.

Before such a load, the session's files get a name no recording of Gemini's ever takes (the
minute, then ``-00``, ``-01`` …, then the short id): Gemini finds sessions by the id inside the
file, not by its name, keeps appending to the file it loaded, and still sees the short id at
the end of the name where it looks for it (to delete a session). A file whose first line does
not name the session is never touched.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MinuteNamedStore:
    """Where an agent keeps sessions in files named by the minute they were created."""

    home_vars: tuple[str, ...]  # the environment variables naming its home, first set wins
    folders: str  # the glob, under that home, of the folders holding session files


GEMINI_STORE = MinuteNamedStore(("GEMINI_CLI_HOME", "HOME"), ".gemini/tmp/*/chats")

# What Gemini's own recordings are named: a minute (2026-11-25T17-26), then the short id.
_MINUTE = r"session-(\d{4}-\d\d-\d\dT\d\d-\d\d)-"


def home_of(store: MinuteNamedStore, env: Mapping[str, str]) -> Path | None:
    for var in store.home_vars:
        if env.get(var):
            return Path(env[var])
    return None


def keep_loadable(
    store: MinuteNamedStore | None, env: Mapping[str, str], session_id: str
) -> list[Path]:
    """Rename the session's minute-named files out of the way of a load; the new paths. A
    failure is only logged: the load may still work (in another minute), and says if not."""
    home = home_of(store, env) if store is not None else None
    if store is None or home is None or len(session_id) < 8:
        return []
    try:
        return _keep_loadable(store, home, session_id)
    except OSError as exc:
        log.warning("could not keep session %s loadable: %s", session_id, exc)
        return []


def _keep_loadable(store: MinuteNamedStore, home: Path, session_id: str) -> list[Path]:
    pattern = re.compile(_MINUTE + re.escape(session_id[:8]) + r"\.jsonl")
    moved = []
    for folder in sorted(home.glob(store.folders)):
        for path in sorted(folder.glob(f"session-*-{session_id[:8]}.jsonl")):
            found = pattern.fullmatch(path.name)
            if found and _names(path, session_id):
                moved.append(_rename(path, found.group(1), session_id[:8]))
    return moved


def _names(path: Path, session_id: str) -> bool:
    """Whether the file's first record is the header of this very session."""
    try:
        with path.open("rb") as file:
            first = json.loads(file.readline(64 * 1024) or b"null")
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and first.get("sessionId") == session_id


def _rename(path: Path, minute: str, short: str) -> Path:
    for n in range(100):
        target = path.with_name(f"session-{minute}-{n:02d}-{short}.jsonl")
        if not target.exists():
            os.rename(path, target)  # same folder: atomic; the agent has not opened it yet
            log.info("renamed %s to %s so that loading it cannot erase it", path, target.name)
            return target
    return path
