"""The command line: a thin click layer over turn, session and daemon."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from agentdoc import __version__
from agentdoc.config import load_settings
from agentdoc.document import WriteLedger, add_frontmatter
from agentdoc.errors import (
    EXIT_INTERRUPTED,
    EXIT_TURN_FAILED,
    EXIT_UNEXPECTED,
    AgentdocError,
)
from agentdoc.terminal import LiveView
from agentdoc.turn import (
    Mode,
    TurnRunner,
    all_statuses,
    clear_dead_turn,
    live_turn,
    read_status,
    recover,
    request_cancel,
)

log = logging.getLogger(__name__)


class _Group(click.Group):
    """Turns user-facing errors into click errors, so every command reports them the same way."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentdocError as exc:
            raise click.ClickException(str(exc)) from exc
        except OSError as exc:
            # A path the system refuses (too long, no permission, a loop of links) is the
            # user's to fix: one line that names it, not a traceback.
            raise click.ClickException(_os_error(exc)) from exc


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    if len(where) > 120:  # a 300-byte name would fill the terminal; its end identifies it
        where = f"…{where[-100:]}"
    return f"{where}{exc.strerror or exc}"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="agentdoc")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def cli(verbose: int) -> None:
    """Keep a conversation with Claude in a markdown file.

    Write a prompt under the last `## User` heading of a session document, then run
    `agentdoc run FILE` (or keep `agentdoc watch` running): the reply streams into the file.
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--title", help="Title (frontmatter and first heading); default: the file name.")
@click.option("--model", help="Model for this document (alias such as sonnet, or a full name).")
def new(path: Path, title: str | None, model: str | None) -> None:
    """Create a new session document at PATH, ready for the first prompt."""
    if path.exists():
        raise AgentdocError(f"{path} already exists; agentdoc will not overwrite it")
    if not path.parent.is_dir():
        raise AgentdocError(f"folder {path.parent} does not exist")
    title = title or path.stem.replace("-", " ").replace("_", " ").strip() or "Conversation"
    meta: dict[str, Any] = {"model": model} if model else {}
    body = f"\n# {title}\n\n## User\n\n"
    text = add_frontmatter(body, meta, {"title": title})
    path.write_text(text, encoding="utf-8")
    click.echo(f"created {path}: write your prompt under `## User`, then `agentdoc run {path}`")


def _run_turn(path: Path, mode: Mode, session: str | None = None, model: str | None = None) -> int:
    current = live_turn(path)
    if current is not None:
        raise AgentdocError(
            f"a reply is already streaming into {path} (pid {current.pid}); "
            f"wait for it or run `agentdoc cancel {path}`"
        )
    recover(path, WriteLedger())  # a reply left open by a killed run
    clear_dead_turn(path)
    settings = load_settings({"model": model})
    runner = TurnRunner(path, settings, mode=mode, session=session, on_progress=LiveView())
    outcome = runner.run()
    if outcome.state == "done":
        return 0
    if outcome.reply.error:
        click.echo(f"error: {outcome.reply.error}", err=True)
    return EXIT_TURN_FAILED


# Existence and type are checked when the file is read, with messages that say what is wrong
# (a folder, a loop of symbolic links…) and exit code 1, not click's usage error.
_path_arg = click.argument("path", type=click.Path(path_type=Path))


@cli.command()
@_path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@click.pass_context
def start(ctx: click.Context, path: Path, model: str | None) -> None:
    """Send the pending prompt as the first turn of a NEW Claude session.

    This is the clean rebuild: if the document already has history, the new session is given
    its transcript (as the document shows it now), and the document continues in that session.
    """
    ctx.exit(_run_turn(path, "start", model=model))


@cli.command()
@_path_arg
@click.option("--session", help="Resume this session id instead of the stored one.")
@click.option("--model", help="Model for this turn (beats the document's).")
@click.pass_context
def resume(ctx: click.Context, path: Path, session: str | None, model: str | None) -> None:
    """Send the pending prompt into the document's stored (or the given) session."""
    ctx.exit(_run_turn(path, "resume", session=session, model=model))


@cli.command()
@_path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@click.pass_context
def run(ctx: click.Context, path: Path, model: str | None) -> None:
    """Resume the document's session if it has one, else start one (for editor hotkeys)."""
    ctx.exit(_run_turn(path, "run", model=model))


@cli.command("fork")
@_path_arg
@click.argument("new", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--turn", type=int, help="Copy exchanges 1..TURN (default: all completed ones).")
def fork_command(path: Path, new: Path, turn: int | None) -> None:
    """Copy the conversation in PATH into a new document NEW, with its lineage.

    NEW's next prompt continues in a forked Claude session (a fork at an earlier turn starts a
    new session seeded with NEW's transcript). PATH and its session are left untouched.
    """
    from agentdoc.turn import fork

    plan = fork(path, new, turn, allow_cwd_outside=load_settings().allow_cwd_outside)
    how = "a fork of its session" if plan.lineage.fork_session else "a new session"
    click.echo(
        f"created {new} from {path} (exchanges 1-{plan.turn}); write your prompt under the "
        f"last `## User`, then `agentdoc run {new}` (it continues in {how})"
    )


@cli.command()
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("agentdoc-demo"),
    show_default=True,
    help="Folder for the demo document (created; its demo document is replaced).",
)
@click.option("--delay", type=float, default=0.03, show_default=True, help="Seconds per token.")
def demo(folder: Path, delay: float) -> None:
    """Watch a reply stream into a document, offline.

    Runs the real Claude Code CLI against a canned Messages API on 127.0.0.1, so no account or
    network is needed: two turns (start, then resume) stream into FOLDER/hello.md.
    """
    from agentdoc.demo import run_demo

    run_demo(folder, delay=delay, out=sys.stdout)


_PATHS = click.Path(exists=True, path_type=Path)


@cli.command()
@click.argument("paths", nargs=-1, type=_PATHS)
@click.option("--poll", is_flag=True, help="Poll for changes (network drives, WSL, containers).")
@click.option(
    "--send-pending",
    is_flag=True,
    help="Also send prompts that were already pending when the daemon started.",
)
@click.option("--max-concurrent", default=4, show_default=True, help="Turns streaming at once.")
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), help="Also log here.")
def watch(
    paths: tuple[Path, ...],
    poll: bool,
    send_pending: bool,
    max_concurrent: int,
    log_file: Path | None,
) -> None:
    """Watch folders or files (default: this folder) and answer every saved prompt.

    Runs in the foreground until Ctrl-C or SIGTERM (systemd-friendly); running turns are then
    stopped and marked interrupted. Each document's state is in `.agentdoc/NAME.status.json`.
    """
    from agentdoc.daemon import Daemon

    if log_file is not None:
        handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logging.getLogger().addHandler(handler)
        logging.getLogger().setLevel(min(logging.getLogger().level, logging.INFO))
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    roots = list(paths) or [Path.cwd()]
    daemon = Daemon(
        roots,
        load_settings(),
        send_pending=send_pending,
        poll=poll,
        max_concurrent=max_concurrent,
        on_progress=LiveView(),
    )
    click.echo(f"agentdoc watching {', '.join(str(r) for r in roots)} (Ctrl-C to stop)", err=True)
    daemon.run(stop)
    click.echo("agentdoc stopped", err=True)


@cli.command("status")
@click.argument("path", required=False, type=_PATHS)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_command(path: Path | None, as_json: bool) -> None:
    """What each document is doing: idle, queued, streaming or error."""
    from agentdoc.daemon import find_daemon

    target = path or Path.cwd()
    if target.is_file():
        found = read_status(target)
        statuses = [found] if found else []
    else:
        statuses = all_statuses(target)
    holder = find_daemon(target)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "daemon": {"pid": holder.pid, "roots": holder.roots} if holder else None,
                    "documents": [s.model_dump() for s in statuses],
                },
                indent=2,
            )
        )
        return
    click.echo(
        f"daemon: pid {holder.pid}, watching {', '.join(holder.roots)}"
        if holder
        else "daemon: not running"
    )
    for s in statuses:
        line = f"{s.document}: {s.state}"
        if s.turn:
            line += f" (turn {s.turn}, ~{s.tokens} tokens, updated {s.updated})"
        if s.error:
            line += f" — {s.error}"
        click.echo(line)


@cli.command()
@_path_arg
@click.option("--wait", default=5.0, show_default=True, help="Seconds to wait for the stop.")
def cancel(path: Path, wait: float) -> None:
    """Cancel the turn streaming into PATH (the partial reply is kept, marked interrupted)."""
    current = read_status(path)
    if current is None or current.state != "streaming":
        raise AgentdocError(f"no turn is streaming into {path}")
    request_cancel(path)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        now = read_status(path)
        if now is not None and now.state != "streaming":
            click.echo(f"cancelled the turn in {path}")
            return
        time.sleep(0.05)
    raise AgentdocError(f"asked to cancel {path}, but the turn has not stopped yet")


@cli.command()
@click.argument("path", required=False, type=_PATHS)
@click.option("--wait", default=15.0, show_default=True, help="Seconds to wait for the exit.")
def stop(path: Path | None, wait: float) -> None:
    """Stop the daemon that watches PATH (default: this folder)."""
    from agentdoc.daemon import find_daemon

    holder = find_daemon(path or Path.cwd())
    if holder is None:
        raise AgentdocError(f"no agentdoc watch is running for {path or Path.cwd()}")
    with contextlib.suppress(ProcessLookupError):
        os.kill(holder.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if find_daemon(holder.lock_file.parent.parent) is None:
            click.echo(f"stopped agentdoc watch (pid {holder.pid})")
            return
        time.sleep(0.05)
    raise AgentdocError(f"agentdoc watch (pid {holder.pid}) has not stopped after {wait:.0f} s")


def main(argv: list[str] | None = None) -> int:
    try:
        code = cli.main(args=argv, prog_name="agentdoc", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except Exception:
        log.exception("unexpected error")
        return EXIT_UNEXPECTED
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
