"""A turn's place in the CLI's session file, what its tools did, and taking their edits back.

Claude Code keeps every message of a session in its session file (see `sessionstore`), each
record with a ``uuid`` and the ``parentUuid`` of the record before it, so one turn is the chain
from its prompt record to its last assistant record. Two hidden flags of the CLI (2.1.197 and
2.1.330 both accept them) build on those ids:

* ``--resume=S --fork-session --resume-session-at=UUID`` continues a copy of session S that ends
  with the assistant record UUID: a true fork at an earlier turn.
* ``--resume=S --rewind-files=UUID`` restores the files the CLI's file checkpointing backed up
  since the prompt record UUID, then exits. Checkpointing covers Write, Edit, MultiEdit and
  NotebookEdit, and runs in print mode only with ``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING``
  set (`build_env` sets it); a shell command's changes are not backed up.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentdoc.agents.base.child import spawn
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.claude.process import build_env, check_argv, resolve_executable
from agentdoc.agents.claude.sessionstore import is_prompt, locate
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError

log = logging.getLogger(__name__)

TAIL = 256 * 1024  # bytes of a session file read first when looking for the turn just run
REWIND_TIMEOUT = 60.0  # seconds; the CLI only copies files back, then exits
# Tools whose file changes the CLI's checkpointing backs up (and so can restore).
CHECKPOINTED = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Tools that change nothing on disk.
READ_ONLY = frozenset(
    {"Read", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead",
     "ExitPlanMode", "BashOutput", "ToolSearch"}
)  # fmt: skip
# Shell commands that only read, when used without redirection or substitution.
_READ_COMMANDS = frozenset(
    {"ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "echo", "printf", "true", "stat",
     "file", "which", "tree", "find", "du", "df", "date", "env", "diff", "sort", "uniq", "cut"}
)  # fmt: skip
_READ_GIT = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "blame"})
_CHAIN = re.compile(r"\|\||&&|[|;\n]")
_WRITES = re.compile(r">|\$\(|`|<\(|(?:^|\s)-(?:delete|exec|execdir|ok|okdir|fprint|fls)")
# How the CLI answers a tool it did not let run (no permission in print mode).
_REFUSED = "requested permissions to"
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True)
class ToolUse:
    name: str
    input: Mapping[str, Any]
    tool_id: str = ""
    # Its result was an error: a Write or Edit that failed changed nothing; a permission the
    # CLI refused (`refused`) means the tool never ran at all.
    failed: bool = False
    refused: bool = False


@dataclass(frozen=True)
class SessionTurn:
    """One turn as the session file holds it."""

    prompt: str  # uuid of the prompt's record
    end: str  # uuid of the turn's last assistant record: a fork at this turn ends there
    tools: tuple[ToolUse, ...] = ()
    tracked: frozenset[str] = frozenset()  # files checkpointing backed up during the turn


def parse_records(lines: Iterable[str]) -> list[dict[str, Any]]:
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _is_reply(record: Mapping[str, Any]) -> bool:
    message = record.get("message")
    return (
        record.get("type") == "assistant"
        and not record.get("isSidechain")
        and isinstance(message, dict)
        and message.get("model") != "<synthetic>"
    )


def _tools(record: Mapping[str, Any]) -> list[ToolUse]:
    content = record.get("message", {}).get("content")
    blocks = content if isinstance(content, list) else []
    return [
        ToolUse(str(b.get("name", "")), b.get("input") or {}, str(b.get("id", "")))
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def _results(records: list[dict[str, Any]]) -> dict[str, tuple[bool, bool]]:
    """Per tool_use id: whether its result was an error, and whether the CLI refused it."""
    found: dict[str, tuple[bool, bool]] = {}
    for record in records:
        content = record.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                text = block.get("content")
                said = text if isinstance(text, str) else json.dumps(text)
                error = bool(block.get("is_error"))
                found[str(block.get("tool_use_id"))] = (error, error and _REFUSED in said)
    return found


def _with_result(tool: ToolUse, results: Mapping[str, tuple[bool, bool]]) -> ToolUse:
    failed, refused = results.get(tool.tool_id, (False, False))
    return ToolUse(tool.name, tool.input, tool.tool_id, failed, refused)


def _tracked(records: list[dict[str, Any]], prompt: str) -> frozenset[str]:
    """The files backed up since ``prompt``: 2.1.197 rewrites a whole snapshot record per change,
    2.1.330 appends one ``file-history-delta`` record per file."""
    found: set[str] = set()
    for record in records:
        snapshot = record.get("snapshot")
        kind = record.get("type")
        if kind == "file-history-delta" and record.get("snapshotMessageId") == prompt:
            found.add(str(record.get("trackingPath", "")))
        elif isinstance(snapshot, dict) and snapshot.get("messageId") == prompt:
            found.update(snapshot.get("trackedFileBackups") or {})
    return frozenset(found)


def _prompts(records: list[dict[str, Any]]) -> dict[str, str]:
    """For each record of the main conversation, the uuid of the prompt whose turn it is in."""
    owner: dict[str, str] = {}
    for record in records:
        uuid = record.get("uuid")
        if not isinstance(uuid, str) or record.get("isSidechain"):
            continue
        if record.get("type") == "user" and is_prompt(record):
            owner[uuid] = uuid
        elif (parent := owner.get(record.get("parentUuid") or "")) is not None:
            owner[uuid] = parent
    return owner


def turn_from(records: list[dict[str, Any]], prompt: str) -> SessionTurn | None:
    """The turn that starts at the prompt record ``prompt``, up to its last assistant record."""
    owner = _prompts(records)
    mine = [r for r in records if owner.get(r.get("uuid") or "") == prompt]
    replies = [r for r in mine if _is_reply(r)]
    if not replies:
        return None
    results = _results([r for r in mine if r.get("type") == "user"])
    tools = tuple(_with_result(t, results) for r in replies for t in _tools(r))
    return SessionTurn(prompt, str(replies[-1]["uuid"]), tools, _tracked(records, prompt))


def find_prompt(records: list[dict[str, Any]], prompt_text: str, since: str = "") -> str | None:
    """The uuid of the session's last prompt record that holds ``prompt_text``, recorded at or
    after ``since`` (an ISO 8601 UTC time, as the records' own ``timestamp``)."""
    for record in reversed(records):
        if record.get("type") != "user" or record.get("isSidechain") or not is_prompt(record):
            continue
        if str(record.get("timestamp", "")) < since:
            return None  # older than the turn: an earlier prompt with the same words
        if _prompt_text(record).strip() == prompt_text.strip() and record.get("uuid"):
            return str(record["uuid"])
    return None


def _prompt_text(record: Mapping[str, Any]) -> str:
    content = record.get("message", {}).get("content")
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _session_records(environ: Mapping[str, str], session: str, cwd: Path) -> list[dict[str, Any]]:
    found, path = locate(environ, session, cwd)
    if not found or path is None:
        return []
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return parse_records(f)
    except OSError as exc:
        log.warning("cannot read the Claude session %s: %s", path, exc)
        return []


def _tail(path: Path, size: int) -> tuple[list[dict[str, Any]], bool]:
    """The records in the last ``size`` bytes of ``path``, and whether that is the whole file."""
    with path.open("rb") as f:
        start = max(0, f.seek(0, os.SEEK_END) - size)
        f.seek(start)
        data = f.read()
    if start:
        data = data[data.find(b"\n") + 1 :]  # the first line is cut
    return parse_records(data.decode("utf-8", "replace").splitlines()), start == 0


def _before(records: list[dict[str, Any]], since: str) -> bool:
    return any(r.get("type") == "user" and str(r.get("timestamp", "~")) < since for r in records)


def session_prompt(
    environ: Mapping[str, str], session: str, cwd: Path, prompt_text: str, since: str = ""
) -> str | None:
    """The record of the prompt sent at ``since`` or later (None: not in the file, yet).

    Runs after every turn, so it reads the file from its end, and only as far back as the turn.
    """
    found, path = locate(environ, session, cwd)
    size = TAIL
    try:
        while found and path is not None:
            records, whole = _tail(path, size)
            hit = find_prompt(records, prompt_text, since)
            if hit is not None or whole or _before(records, since):
                return hit
            size *= 4
    except OSError as exc:
        log.warning("cannot read the Claude session %s: %s", path, exc)
    return None


def session_turn(
    environ: Mapping[str, str], session: str, cwd: Path, prompt: str
) -> SessionTurn | None:
    return turn_from(_session_records(environ, session, cwd), prompt)


def reads_only(command: str) -> bool:
    """Whether a shell command certainly changes nothing (conservative: unsure means no)."""
    if _WRITES.search(command):
        return False
    for part in _CHAIN.split(command):
        words = part.split()
        if not words:
            continue
        if words[0] == "git":
            if len(words) < 2 or words[1] not in _READ_GIT:
                return False
        elif words[0] not in _READ_COMMANDS:
            return False
    return True


def _summary(tool: ToolUse) -> str:
    if tool.name == "Bash":
        return f"Bash `{str(tool.input.get('command', ''))[:80]}`"
    return tool.name


def _path_key(path: str, cwd: Path) -> set[str]:
    # Checkpointing names files inside the working folder relative to it, others absolutely.
    keys = {path}
    try:
        keys.add(os.path.relpath(path, cwd))
        keys.add(os.path.relpath(os.path.realpath(path), os.path.realpath(cwd)))
    except ValueError:
        pass
    return keys


def files_unrestorable(turn: SessionTurn, cwd: Path) -> list[str]:
    """Why the turn's file changes cannot all be restored exactly ([] if they can)."""
    reasons = []
    for tool in turn.tools:
        if tool.name in READ_ONLY or tool.refused or (tool.failed and tool.name in CHECKPOINTED):
            continue
        if tool.name == "Bash" and reads_only(str(tool.input.get("command", ""))):
            continue
        if tool.name in CHECKPOINTED:
            path = str(tool.input.get("file_path") or tool.input.get("notebook_path") or "")
            if not path or _path_key(path, cwd) & turn.tracked:
                continue
            reasons.append(f"{tool.name} changed {path}, but Claude Code kept no copy of it")
            continue
        reasons.append(f"{_summary(tool)} may have changed files that cannot be restored exactly")
    return reasons


def changes_files(turn: SessionTurn) -> bool:
    """Whether the turn ran a tool that may change files."""
    return any(t.name not in READ_ONLY and not t.refused for t in turn.tools)


def rewind_files(
    settings: Settings,
    environ: Mapping[str, str],
    session: str,
    prompt: str,
    clearance: Clearance,
) -> None:
    """Restore the files the turn starting at record ``prompt`` changed (AgentdocError if not);
    the CLI runs in `clearance.cwd`, with the gate's leave like any other start."""
    if not _UUID.fullmatch(session) or not _UUID.fullmatch(prompt):
        raise AgentdocError("the recorded turn does not name a Claude session message")
    argv = [resolve_executable(settings.claude), "-p", f"--resume={session}"]
    argv.append(f"--rewind-files={prompt}")
    if not clearance.folder_settings:
        argv.append("--setting-sources=user")  # as for a turn in the same folder
    check_argv(argv)
    env = build_env(environ, settings)
    try:
        proc = spawn(argv, clearance.cwd, env, clearance=clearance)
    except (OSError, ValueError) as exc:
        raise AgentdocError(f"could not run claude to restore the files: {exc}") from exc
    try:
        out, err = proc.communicate(b"", timeout=REWIND_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        proc.kill()
        proc.communicate()
        raise AgentdocError(
            f"claude did not restore the files within {REWIND_TIMEOUT:.0f} s"
        ) from exc
    said = (err + out).decode("utf-8", "replace").strip()
    if proc.returncode != 0 or "rewound" not in said.lower():
        raise AgentdocError(
            f"claude could not restore the turn's files (exit {proc.returncode}): {said[-400:]}"
        )
    log.info("restored the files of session %s back to message %s", session, prompt)
