"""Whether the Claude Code CLI still has a session that a document wants to resume.

The CLI keeps each session in ``<config>/projects/<slug of the cwd>/<session id>.jsonl``, where
``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``$HOME/.claude`` of the CLI's own environment, and it
only resumes a session from the working folder it was recorded in (a resume from elsewhere ends
in "No conversation found"). Asking before the turn lets a lost session be rebuilt from the
document instead of leaving an error in it. The answer is "unknown" (None) when the store cannot
be located, and then the CLI is simply asked to resume.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The CLI cuts longer slugs and appends a hash we cannot recompute; the prefix still matches.
_SLUG_LIMIT = 200
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
# The first records of a session file are bookkeeping without a cwd; the first message has one.
_SCAN_LINES = 50
# `--resume` also takes a session title; only a plain id can be looked up as a file name.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*")


def config_dir(environ: Mapping[str, str]) -> Path | None:
    """The CLI's config folder for this environment, or None if it cannot be told."""
    if environ.get("CLAUDE_CONFIG_DIR"):
        return Path(environ["CLAUDE_CONFIG_DIR"])
    if environ.get("HOME"):
        return Path(environ["HOME"]) / ".claude"
    return None


def slug(cwd: str) -> str:
    return _NOT_ALNUM.sub("-", cwd)


def recorded_cwd(lines: list[str]) -> str | None:
    """The working folder a session file records (its first record that carries one)."""
    for line in lines[:_SCAN_LINES]:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("cwd"), str):
            return str(record["cwd"])
    return None


def _same_folder(recorded: str, cwd: Path) -> bool:
    # The CLI records the physical path (symlinks resolved), so compare resolved paths.
    return os.path.realpath(recorded) == os.path.realpath(cwd)


def belongs_to(session_file: Path, lines: list[str], cwd: Path) -> bool:
    """Whether a session file was recorded in ``cwd``; by its records, else by its folder name."""
    recorded = recorded_cwd(lines)
    if recorded is not None:
        return _same_folder(recorded, cwd)
    expected = slug(os.path.realpath(cwd))
    name = session_file.parent.name
    return name == expected or (len(expected) > _SLUG_LIMIT and name[:_SLUG_LIMIT] == expected)


def _head(path: Path) -> list[str]:
    lines: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            lines.append(line)
            if len(lines) >= _SCAN_LINES:
                break
    return lines


def locate(
    environ: Mapping[str, str], session_id: str, cwd: Path
) -> tuple[bool | None, Path | None]:
    """Whether the session is there (None: cannot tell) and, if so, its file."""
    config = config_dir(environ)
    if config is None or not _PLAIN_ID.fullmatch(session_id):
        return None, None
    projects = config / "projects"
    try:
        candidates = sorted(projects.glob(f"*/{session_id}.jsonl"))
        for candidate in candidates:
            if belongs_to(candidate, _head(candidate), cwd):
                return True, candidate
    except OSError as exc:
        log.warning("cannot read the Claude session store %s: %s", projects, exc)
        return None, None
    log.info("session %s is not in %s for %s", session_id, projects, cwd)
    return False, None


def has_session(environ: Mapping[str, str], session_id: str, cwd: Path) -> bool | None:
    """True/False if the CLI run with ``environ`` in ``cwd`` can/cannot resume ``session_id``.

    None when the CLI's config folder is unknown or unreadable: then nobody can tell.
    """
    return locate(environ, session_id, cwd)[0]


def is_prompt(record: Mapping[str, Any]) -> bool:
    """A user message the person wrote (not a tool result, a meta note or an interrupt mark)."""
    content = record.get("message", {}).get("content")
    if record.get("isMeta") or content is None:
        return False
    if isinstance(content, str):
        return True
    texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return bool(texts) and not all(t.startswith("[Request interrupted") for t in texts)


def reply_text(lines: list[str]) -> str:
    """The text the session holds of its last reply: its assistant text after the last prompt.

    Claude Code 2.1.197 drops the partial text of an interrupted reply from the session;
    2.1.330 keeps it. Subagents' records (sidechains) and the CLI's own synthetic messages
    ("No response requested.") are not the reply.
    """
    parts: list[str] = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict) or record.get("isSidechain"):
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        if record.get("type") == "user" and is_prompt(record):
            parts = []
        elif record.get("type") == "assistant" and message.get("model") != "<synthetic>":
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            parts.extend(
                str(b.get("text", ""))
                for b in blocks
                if isinstance(b, dict) and b.get("type") == "text"
            )
    return "".join(parts)


def last_reply_text(environ: Mapping[str, str], session_id: str, cwd: Path) -> str | None:
    """`reply_text` of the session's file; None when it cannot be found or read."""
    found, path = locate(environ, session_id, cwd)
    if not found or path is None:
        return None
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return reply_text(f.readlines())
    except OSError as exc:
        log.warning("cannot read the Claude session %s: %s", path, exc)
        return None
