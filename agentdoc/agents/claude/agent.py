"""The Claude Code CLI as an `Agent`: what it can do, and the parts done its own way."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agentdoc.agents.base.agent import Agent, Capabilities, Environ, Known
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.marks import TurnMark
from agentdoc.agents.claude import sessionstore
from agentdoc.agents.claude.checks import check
from agentdoc.agents.claude.failures import classify
from agentdoc.agents.claude.launch import start, warm
from agentdoc.agents.claude.process import resolve_executable
from agentdoc.agents.claude.rewind import (
    changes_files,
    files_unrestorable,
    rewind_files,
    session_prompt,
    session_turn,
)
from agentdoc.config import Settings

# A little slack: the CLI stamps a prompt's record after we noted the turn's start.
SLACK = timedelta(seconds=2)


class SessionFiles:
    """Claude's sessions are JSONL files under its config folder, one folder per project."""

    kept = "Claude keeps sessions per folder (and per $HOME / $CLAUDE_CONFIG_DIR)"

    def has_session(self, environ: Mapping[str, str], session: str, cwd: Path) -> bool | None:
        return sessionstore.has_session(environ, session, cwd)

    def last_reply_text(self, environ: Mapping[str, str], session: str, cwd: Path) -> str | None:
        return sessionstore.last_reply_text(environ, session, cwd)


class SessionHistory:
    """A turn is its prompt's record in the session file: the CLI resumes a copy of the
    session at any record (`--resume-session-at`) and rewinds its tools' file changes."""

    def mark_turn(
        self,
        environ: Mapping[str, str],
        session: str,
        cwd: Path,
        prompt: str,
        since: datetime,
        message_id: str | None,
        branch: str | None,
    ) -> str | None:
        # A one-shot CLI has written its whole session file when it exits, so the prompt's
        # record is found there. A warm CLI writes its file a little later, but it recorded
        # the prompt under ``message_id``, the id the request chose.
        iso = (since - SLACK).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return session_prompt(environ, session, cwd, prompt, iso) or message_id

    def branch_point(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[str, str] | None:
        found = session_turn(environ, mark.session, cwd, mark.start)
        return None if found is None else (mark.session, found.end)

    def unrestorable(
        self, environ: Mapping[str, str], mark: TurnMark, cwd: Path
    ) -> tuple[bool, list[str]] | None:
        found = session_turn(environ, mark.session, cwd, mark.start)
        if found is None:
            return None
        return changes_files(found), files_unrestorable(found, cwd)

    def restore_files(
        self, settings: Settings, environ: Mapping[str, str], mark: TurnMark, clearance: Clearance
    ) -> None:
        rewind_files(settings, environ, mark.session, mark.start, clearance)


def _find(command: Sequence[str], _environ: Mapping[str, str]) -> str:
    return resolve_executable(command[0])  # its messages say how to install it


MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
# What `--effort` takes (the CLI's own list; agentdoc's config and documents check it too).
EFFORTS = ["low", "medium", "high", "xhigh", "max"]


def _known(_name: str, _command: Sequence[str], policy: str | None, _environ: Environ) -> Known:
    # agentdoc builds the CLI's argv: the policy is its `--permission-mode` as it is, and any
    # model name the CLI knows goes to `--model`.
    return Known(policy or "default", {"mode": list(MODES), "effort": EFFORTS})


def _recognises(cmdline: bytes) -> bool:
    return b"--output-format=stream-json" in cmdline


CLAUDE = Agent(
    protocol="claude",
    can=Capabilities(
        chooses_session_id=True,
        resumes_at=True,
        forks=True,
        rewinds_files=True,
        permission_modes=MODES,
        standard_approval=True,
        answer_has_reason=True,
        skips_folder_settings=True,
    ),
    # agentdoc builds Claude's argv itself, from the settings; the entry names only the program.
    start=lambda request, _command, _env, settings, environ: start(request, settings, environ),
    warm=lambda request, _command, _env, settings, environ: warm(request, settings, environ),
    find_program=_find,
    classify=classify,
    recognises=_recognises,
    known=_known,
    check=check,
    sessions=SessionFiles(),
    history=SessionHistory(),
)
