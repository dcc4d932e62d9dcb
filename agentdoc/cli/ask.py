"""`agentdoc ask`: put a prompt from the command line into a document, then run it.

The prompt is written under the last `## User` heading, as if typed there, so the document stays
the record. When a daemon watches the file, writing it is the whole hand-over: the daemon sees
the save and runs the turn as for any save, and this command waits for that turn to end and
prints its reply (Ctrl-C cancels it). Without one, the turn runs here as `agentdoc run --print`
runs it.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from agentdoc.config import load_settings
from agentdoc.daemon import find_daemon
from agentdoc.document import (
    LINE_BREAK,
    DocumentError,
    FrontmatterError,
    dominant_newline,
    is_unanswered,
    parse,
    read_text,
    seal_reply,
    strip_comments,
    write_text,
)
from agentdoc.errors import EXIT_INTERRUPTED, EXIT_TURN_FAILED, AgentdocError
from agentdoc.records import Status, live_turn, read_status, request_cancel
from agentdoc.turn import wants_marker

# A turn the daemon finished, failed or held leaves one of these behind.
_SETTLED = ("idle", "error", "pending")
_RUNNING = ("streaming", "waiting")
_POLL = 0.05  # seconds between looks at the status file while the daemon works
# A daemon that has not even started on the prompt by then is not going to: it does not
# watch this file after all (an ignored name, a folder it cannot see).
TAKEN_WITHIN = 30.0


def with_prompt(text: str, prompt: str, marker: str | None = None) -> str:
    """`text` with `prompt` added under its last `## User` (a new one after a reply), in the
    document's own line endings; `marker` (the submit marker) ends it when the document
    sends only marked prompts."""
    doc = parse(text)
    nl = dominant_newline(text)
    # A piped file's `## Assistant` line or open code fence must not reshape the conversation.
    lines = LINE_BREAK.split(seal_reply(prompt.strip()).strip())
    if marker:
        lines.append(marker)
    added = nl.join(lines) + nl
    pending = doc.pending_turn()
    if pending is None:
        return f"{text.rstrip()}{nl}{nl}## User{nl}{nl}{added}"
    head, rest = text[: pending.end].rstrip(), text[pending.end :]
    return f"{head}{nl}{nl}{added}" + (f"{nl}{rest}" if rest else "")


def read_prompt(prompt: str) -> str:
    """The prompt as given, or stdin's text for `-`; never empty."""
    text = sys.stdin.read() if prompt == "-" else prompt
    if not text.strip():
        where = "stdin" if prompt == "-" else "the prompt argument"
        raise AgentdocError(f"nothing to ask: {where} is empty")
    return text


@dataclass(frozen=True)
class Asked:
    turn: int  # the number of the exchange the prompt starts
    before: Status | None  # the status before it, to tell the new turn's status from an old one


def add_prompt(path: Path, prompt: str, *, for_daemon: bool) -> Asked:
    """Write the prompt into the document."""
    text = read_text(path)
    marker = None
    try:
        doc = parse(text)
        if for_daemon and wants_marker(doc, load_settings().trigger):
            marker = load_settings().submit_marker
        asked = Asked(doc.turn_count() + 1, read_status(path))
        write_text(path, with_prompt(text, prompt, marker))
    except (DocumentError, FrontmatterError) as exc:
        raise AgentdocError(f"{path}: {exc}") from exc
    return asked


def ask_daemon(path: Path, asked: Asked, *, show: bool) -> int:
    """Wait for the daemon to answer the prompt just written, then print the reply if `show`.
    Ctrl-C cancels the turn this started, as it would if the turn ran here."""
    try:
        now = _wait_for_answer(path, asked)
    except KeyboardInterrupt:
        return _cancel(path, asked)
    if now.state != "idle":
        reason = now.held or now.error or now.state
        click.echo(f"{path}: the prompt was not answered: {reason}", err=True)
        return EXIT_TURN_FAILED
    if show:
        click.echo(last_reply(read_text(path)))
    return 0


def _wait_for_answer(path: Path, asked: Asked) -> Status:
    deadline = time.monotonic() + TAKEN_WITHIN
    while True:
        if find_daemon(path) is None:
            raise AgentdocError(f"the agentdoc watch for {path} stopped before it answered")
        now = read_status(path)
        if _settled(now, asked):
            break
        if now == asked.before and time.monotonic() > deadline:
            raise AgentdocError(
                f"the agentdoc watch running here has not taken the prompt in {path} after "
                f"{TAKEN_WITHIN:.0f} s (see `agentdoc status {path}`); it stays in the document"
            )
        time.sleep(_POLL)
    assert now is not None
    return now


def _cancel(path: Path, asked: Asked) -> int:
    """Cancel the daemon's turn for the prompt, once it has started (a request before that
    would be dropped as stale); a second Ctrl-C leaves it to run."""
    click.echo("interrupted: cancelling the turn (Ctrl-C again to leave it running)…", err=True)
    deadline = time.monotonic() + TAKEN_WITHIN
    asked_to = False
    while time.monotonic() < deadline and find_daemon(path) is not None:
        now = read_status(path)
        if _settled(now, asked):
            said = "cancelled; the partial reply is kept" if asked_to else "already answered"
            click.echo(f"{path}: the turn was {said} in the document", err=True)
            return EXIT_INTERRUPTED
        if now != asked.before and now is not None and now.state in _RUNNING and not asked_to:
            request_cancel(path)
            asked_to = True
        time.sleep(_POLL)
    click.echo(
        f"{path}: the turn was not cancelled in time; `agentdoc cancel {path}` stops it",
        err=True,
    )
    return EXIT_INTERRUPTED


def _settled(now: Status | None, asked: Asked) -> bool:
    """The daemon is done with the prompt: its turn ended, or it held the prompt back."""
    if now is None or now.state not in _SETTLED:
        return False
    if now == asked.before:
        return False  # still the status from before the prompt was written
    if now.state == "pending" or (now.state == "error" and now.turn is None):
        return True  # held back, or the document itself is in the way
    # A reply that streamed when the prompt was written ends first; the prompt's turn follows.
    return now.turn == asked.turn


def last_reply(text: str) -> str:
    """The text of the document's last reply, without agentdoc's comments and footer."""
    doc = parse(text)
    reply = next(
        (t for t in reversed(doc.turns) if t.role == "assistant" and not is_unanswered(t)), None
    )
    if reply is None:
        return ""
    lines = LINE_BREAK.split(strip_comments(reply.content).strip())
    if lines and lines[-1].lstrip().startswith("<sub>"):
        lines.pop()
    return "\n".join(lines).strip()


def ask(path: Path, prompt: str, *, quiet: bool) -> int:
    current = live_turn(path)
    daemon = find_daemon(path)
    if current is not None and daemon is None:
        raise AgentdocError(
            f"a reply is already streaming into {path} (pid {current.pid}); "
            f"wait for it or run `agentdoc cancel {path}`"
        )
    asked = add_prompt(path, prompt, for_daemon=daemon is not None)
    # Asking is for the answer, in a terminal too (as `llm` prints it); -q is for scripts that
    # read the document.
    if daemon is not None:
        if not quiet:
            click.echo(f"handed to agentdoc watch (pid {daemon.pid})", err=True)
        return ask_daemon(path, asked, show=not quiet)
    from agentdoc.cli.foreground import run_turn

    return run_turn(path, "run", print_reply=not quiet, quiet=quiet)
