"""Running a turn or the daemon in the foreground of a terminal.

What `agentdoc run/start/resume` and `agentdoc watch` do once click has parsed their options:
the progress view on stderr, the reply echoed to stdout when it is a pipe, Ctrl-C/SIGTERM/SIGHUP,
and the exit code. Imported only by those commands, so quick commands stay light.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentdoc.agents import start_turn
from agentdoc.cli.asker import TerminalAsker, refusals
from agentdoc.cli.echo import ReplyEcho
from agentdoc.cli.interrupt import stop_on_signals
from agentdoc.cli.logs import log_path, open_log_file
from agentdoc.cli.terminal import LiveView
from agentdoc.config import config_path, load_settings
from agentdoc.daemon import own_command, paced
from agentdoc.document import NOT_ASKED_HINT, WriteLedger, byproduct_kind, conflict_original
from agentdoc.errors import EXIT_TURN_FAILED, AgentdocError, require_existing
from agentdoc.records import clear_dead_turn, live_turn, recover
from agentdoc.turn import Mode, Progress, TurnRunner

if TYPE_CHECKING:
    from agentdoc.daemon import Daemon
    from agentdoc.web import Running, Serving

# Whatever id the agent uses (most: UUIDs; some: `ses_…`), as the
# frontmatter's `session:` takes it: never a path or a flag (it rides in an argv, names a file).
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def _reporter(print_reply: bool, quiet: bool) -> tuple[LiveView, Callable[[Progress], None]]:
    """The progress callback of a one-shot turn, and the view to close when it ends.

    stdout carries the reply whenever it is not a terminal (`agentdoc run x.md | cat`); in a
    terminal only with --print. Progress and errors always go to stderr.
    """
    view = LiveView(quiet=quiet, show_reply=print_reply)
    echo_reply = not quiet and (not sys.stdout.isatty() or (print_reply and not view.show_reply))
    if not echo_reply:
        return view, view
    echo = ReplyEcho(sys.stdout)

    def both(p: Progress) -> None:
        echo(p)
        view(p)

    return view, both


def refuse_byproduct(path: Path) -> None:
    """A sync tool's copy is never run: it would answer the same session from a second file."""
    original = conflict_original(path.name)
    if original is not None:
        raise AgentdocError(
            f"{path} is a sync tool's conflict copy of {path.with_name(original)}, not a "
            "session document; agentdoc never runs it (copy what you need into the document)"
        )
    kind = byproduct_kind(path.name)
    if kind is not None:
        raise AgentdocError(f"{path} is a sync tool's {kind} file, not a session document")


def run_turn(
    path: Path,
    mode: Mode,
    session: str | None = None,
    model: str | None = None,
    *,
    print_reply: bool = False,
    quiet: bool = False,
) -> int:
    _may_start(path, session)
    recover(path, WriteLedger())  # a reply left open by a killed run
    clear_dead_turn(path)
    settings = paced(path, load_settings({"model": model}))
    cancel = threading.Event()
    view, report = _reporter(print_reply, quiet)
    # In a terminal the person can answer a tool's permission request right there: the CLI
    # then runs as the daemon runs it, asking over stdio, for this one turn.
    asker = TerminalAsker(path, report, view.close) if _can_ask(quiet) else None
    pool = None
    if asker is not None:
        from agentdoc.daemon import WarmPool  # the daemon's machinery only for a person asking

        pool = WarmPool(capacity=1)
    try:
        runner = TurnRunner(
            path,
            settings,
            clear=own_command(path, settings),
            mode=mode,
            session=session,
            on_progress=asker or report,
            cancel=cancel,
            launcher=pool.launcher(path.absolute()) if pool is not None else start_turn,
        )
        with stop_on_signals(cancel) as caught:
            outcome = runner.run()
    finally:
        if asker is not None:
            asker.done()
        view.close()
        if pool is not None:
            pool.close_all()
    if caught.exit_code is not None:
        click.echo("interrupted: the partial reply is kept in the document", err=True)
        return caught.exit_code
    if (refused := refusals(outcome.reply)) and not quiet:
        click.echo(
            f"note: the agent was refused {', '.join(refused)} without being asked. "
            f"{NOT_ASKED_HINT}",
            err=True,
        )
    # A failure was reported (once, in full) by the view.
    return 0 if outcome.state == "done" else EXIT_TURN_FAILED


def _may_start(path: Path, session: str | None) -> None:
    """Refuse, before anything changes, a document that is not one, a `--session` that is no
    session id, or a document a reply is already streaming into."""
    require_existing(path)
    refuse_byproduct(path)
    if session is not None and not SESSION_ID.fullmatch(session):
        raise AgentdocError(
            f"--session {session!r} is not a session id (letters, digits, _ and -, not "
            "starting with -: a UUID such as 1c0e5d6a-9a8e-4a51-a4c4-1bc2a8c0f4f5, or "
            "an agent's own such as ses_…, as in the document's `session:`)"
        )
    current = live_turn(path)
    if current is not None:
        raise AgentdocError(
            f"a reply is already streaming into {path} (pid {current.pid}); "
            f"wait for it or run `agentdoc cancel {path}`"
        )


def _can_ask(quiet: bool) -> bool:
    """A person at a terminal: the question goes to stderr, the answer comes from stdin."""
    return not quiet and all(s is not None and s.isatty() for s in (sys.stdin, sys.stderr))


def _serve(daemon: Daemon, roots: list[Path], serving: Serving | None) -> Running | None:
    """The web page beside the daemon, telling it the saves the daemon's watcher sees."""
    if serving is None:
        return None
    from agentdoc.web import serve

    page = serve(roots, daemon.settings, serving, daemon.documents, daemon.untrusted)
    daemon.on_change = page.hub.tell
    how = " (read-only)" if serving.read_only else ""
    token = "; it asks for the token `agentdoc serve-token` shows" if page.token else ""
    click.echo(f"agentdoc serving the page on {page.url}{how}{token}", err=True)
    return page


def _not_told(record: logging.LogRecord) -> bool:
    return not getattr(record, "told", False)


def watch_in_foreground(
    paths: list[Path],
    poll: bool,
    send_pending: bool,
    max_concurrent: int | None,
    log_file: Path | None,
    serving: Serving | None = None,
) -> None:
    """The daemon until Ctrl-C or SIGTERM, with a live view of its turns, logging to
    `log_file` (None: no file) as well as to the terminal (and the web page, when `serving` or
    the config's `serve` asks for it)."""
    from agentdoc.daemon import Daemon, Stop  # not loaded by one-shot turns, timed per process

    stop = Stop()  # wakes the daemon's sleeping loop too
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    roots = paths or [Path.cwd()]
    view = LiveView(roots=roots, log_states=True)  # for the log file, if there is one
    for shown in logging.getLogger().handlers:
        if isinstance(shown, logging.StreamHandler) and shown.stream in (sys.stderr, sys.stdout):
            shown.addFilter(_not_told)  # the view prints these failures itself
    settings = load_settings()
    daemon = Daemon(
        roots,
        settings,
        send_pending=send_pending,
        poll=poll,
        max_concurrent=max_concurrent,
        on_progress=view,
        config=config_path(),  # read again when saved
    )
    if serving is None and settings.serve:
        from agentdoc.web import Serving

        serving = Serving(settings.serve)
    with _logging_to(log_file) as logged:
        page = _serve(daemon, roots, serving)
        click.echo(
            f"agentdoc watching {', '.join(str(r) for r in roots)} (Ctrl-C to stop)", err=True
        )
        if logged is not None:
            click.echo(f"log: {logged} (`agentdoc logs -f` follows it)", err=True)
        try:
            daemon.run(stop)
        finally:
            view.close()  # gives the terminal its cursor back, whatever stopped the daemon
            if page is not None:
                page.stop()
        click.echo("agentdoc stopped", err=True)


@contextlib.contextmanager
def _logging_to(path: Path | None) -> Iterator[Path | None]:
    """INFO and up also to the file at `path` (the default one rotated), while the terminal
    keeps the level -v chose; yields the file, None when there is none."""
    if path is None:
        yield None
        return
    root = logging.getLogger()
    default = path == log_path()
    try:
        handler = open_log_file(path, rotate=default)
    except OSError as exc:
        problem = f"cannot write the log file {path}: {exc.strerror or exc}"
        if not default:
            raise AgentdocError(problem) from exc
        # The state folder's log is a convenience: a read-only home must not stop the daemon.
        logging.getLogger(__name__).warning("%s; logging to the terminal only", problem)
        yield None
        return
    chosen = root.level
    levels = {shown: shown.level for shown in root.handlers}
    for shown in levels:
        shown.setLevel(max(shown.level, chosen))
    root.addHandler(handler)
    root.setLevel(min(chosen, logging.INFO))
    try:
        yield path
    finally:
        root.removeHandler(handler)
        handler.close()
        root.setLevel(chosen)
        for shown, level in levels.items():
            shown.setLevel(level)
