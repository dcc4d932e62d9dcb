"""The command line: a thin click layer over turn, session and daemon."""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentdoc import __version__
from agentdoc.errors import (
    EXIT_INTERRUPTED,
    EXIT_UNEXPECTED,
    EXIT_USER_ERROR,
    AgentdocError,
    require_existing,
)

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


# Each command imports what it uses: `--help`, `status` or `stop` should not pay for loading
# the parser, the models and the watcher (about 0.4 s) before doing a few milliseconds of work.

log = logging.getLogger(__name__)


def _complete_documents(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion for document arguments: markdown files and folders (to go into)."""
    from agentdoc.cli.completion import document_candidates

    return document_candidates(incomplete)


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
    # What a user reads says what happened, not which module said it; -vv is for debugging.
    shape = "%(levelname)s %(name)s: %(message)s" if verbose >= 2 else "%(levelname)s: %(message)s"
    logging.basicConfig(level=level, format=shape)
    if sys.platform == "win32":
        # The tree lock (flock), process groups and permissions are POSIX: say so up front
        # rather than fail half-way through a turn.
        raise AgentdocError(
            "agentdoc runs on Linux and macOS; on Windows, run it inside WSL "
            "(Windows Subsystem for Linux)"
        )


@cli.command()
@click.argument(
    "path", type=click.Path(dir_okay=False, path_type=Path), shell_complete=_complete_documents
)
@click.option("--title", help="Title (frontmatter and first heading); default: the file name.")
@click.option("--model", help="Model for this document (alias such as sonnet, or a full name).")
@click.option("--agent", help="Agent that answers (claude, gemini, codex, opencode or your own).")
def new(path: Path, title: str | None, model: str | None, agent: str | None) -> None:
    """Create a new session document at PATH, ready for the first prompt."""
    from agentdoc.agents import resolve_agent
    from agentdoc.config import load_settings
    from agentdoc.document import add_frontmatter

    if agent is not None:
        resolve_agent(agent, load_settings())
    if path.exists():
        raise AgentdocError(f"{path} already exists; agentdoc will not overwrite it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # `agentdoc new notes/x.md` just works
    except OSError as exc:
        raise AgentdocError(f"cannot create the folder {path.parent}: {exc.strerror}") from exc
    title = title or path.stem.replace("-", " ").replace("_", " ").strip() or "Conversation"
    meta: dict[str, Any] = {"agent": agent} if agent else {}
    if model:
        meta["model"] = model
    body = f"\n# {title}\n\n## User\n\n"
    text = add_frontmatter(body, meta, {"title": title})
    path.write_text(text, encoding="utf-8")
    click.echo(f"created {path}: write your prompt under `## User`, then `agentdoc run {path}`")


def _output_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option(
        "-q", "--quiet", is_flag=True, help="Print nothing but errors (not even the reply)."
    )(f)
    return click.option(
        "-p",
        "--print",
        "print_reply",
        is_flag=True,
        help="Also stream the reply into the terminal (it always goes to stdout when that is "
        "a pipe or a file).",
    )(f)


# Existence and type are checked when the file is read, with messages that say what is wrong
# (a folder, a loop of symbolic links…) and exit code 1, not click's usage error.
_path_arg = click.argument(
    "path", type=click.Path(path_type=Path), shell_complete=_complete_documents
)


@cli.command()
@_path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@_output_options
@click.pass_context
def start(
    ctx: click.Context, path: Path, model: str | None, print_reply: bool, quiet: bool
) -> None:
    """Send the pending prompt as the first turn of a NEW Claude session.

    This is the clean rebuild: if the document already has history, the new session is given
    its transcript (as the document shows it now), and the document continues in that session.
    """
    from agentdoc.cli.foreground import run_turn

    ctx.exit(run_turn(path, "start", model=model, print_reply=print_reply, quiet=quiet))


@cli.command()
@_path_arg
@click.option("--session", help="Resume this session id instead of the stored one.")
@click.option("--model", help="Model for this turn (beats the document's).")
@_output_options
@click.pass_context
def resume(
    ctx: click.Context,
    path: Path,
    session: str | None,
    model: str | None,
    print_reply: bool,
    quiet: bool,
) -> None:
    """Send the pending prompt into the document's stored (or the given) session."""
    from agentdoc.cli.foreground import run_turn

    ctx.exit(
        run_turn(path, "resume", session=session, model=model, print_reply=print_reply, quiet=quiet)
    )


@cli.command()
@_path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@_output_options
@click.pass_context
def run(ctx: click.Context, path: Path, model: str | None, print_reply: bool, quiet: bool) -> None:
    """Resume the document's session if it has one, else start one (for editor hotkeys).

    The reply streams into the document; when stdout is a pipe or a file it streams there too
    (just the reply's text), and with --print also into the terminal.
    """
    from agentdoc.cli.foreground import run_turn

    ctx.exit(run_turn(path, "run", model=model, print_reply=print_reply, quiet=quiet))


@cli.command("fork")
@_path_arg
@click.argument(
    "new", type=click.Path(dir_okay=False, path_type=Path), shell_complete=_complete_documents
)
@click.option("--turn", type=int, help="Copy exchanges 1..TURN (default: all completed ones).")
def fork_command(path: Path, new: Path, turn: int | None) -> None:
    """Copy the conversation in PATH into a new document NEW, with its lineage.

    NEW's next prompt continues in a fork of the agent's session, cut at TURN (an agent that
    cannot branch there gets a new session seeded with NEW's transcript). PATH and its session
    are left untouched.
    """
    from agentdoc.config import load_settings
    from agentdoc.turn import fork

    plan = fork(path, new, turn, allow_cwd_outside=load_settings().allow_cwd_outside)
    how = "a fork of its session" if plan.lineage.fork_session else "a new session"
    click.echo(
        f"created {new} from {path} (exchanges 1-{plan.turn}); write your prompt under the "
        f"last `## User`, then `agentdoc run {new}` (it continues in {how})"
    )


@cli.command("archive")
@_path_arg
@click.option(
    "--keep", type=click.IntRange(min=0), default=3, show_default=True, help="Exchanges to keep."
)
def archive_command(path: Path, keep: int) -> None:
    """Move all but the last KEEP exchanges of PATH into PATH's archive file, byte for byte.

    The archive (NAME.archive.md beside PATH, linked from it) is not a session document. The
    session goes on; a rebuilt session still gets the archived exchanges as history.
    """
    from agentdoc.document import archive_path
    from agentdoc.turn import archive_document

    require_existing(path)
    moved = archive_document(path, keep)
    click.echo(f"moved {moved.moved} exchange(s) of {path} into {archive_path(path)}")


@cli.command()
@_path_arg
def undo(path: Path) -> None:
    """Take the last turn of PATH back: its reply, its file changes, the session's memory of it.

    The prompt stays under the last `## User`, pending, for you to edit and send again. Refuses,
    saying why, when a turn streams or its changes cannot be restored exactly.
    """
    from agentdoc.config import load_settings
    from agentdoc.turn import undo as undo_turn

    require_existing(path)
    done = undo_turn(path, load_settings())
    files = "; its file changes were restored" if done.restored else ""
    git = "; committed" if done.committed else ""
    click.echo(f"took turn {done.turn} of {path} back{files}{git}; its prompt is pending again")


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
    from agentdoc.cli.demo import run_demo

    run_demo(folder, delay=delay, out=sys.stdout)


_PATHS = click.Path(exists=True, path_type=Path)


@cli.command()
@click.argument("paths", nargs=-1, type=_PATHS, shell_complete=_complete_documents)
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
    from agentdoc.cli.foreground import watch_in_foreground

    watch_in_foreground(list(paths), poll, send_pending, max_concurrent, log_file)


@cli.command("status")
@click.argument(
    "path", required=False, type=click.Path(path_type=Path), shell_complete=_complete_documents
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_command(path: Path | None, as_json: bool) -> None:
    """What each document is doing: idle, queued, streaming, waiting or error."""
    from agentdoc.daemon import find_daemon
    from agentdoc.turn import all_statuses, as_found, read_status

    target = path or Path.cwd()
    require_existing(target)
    if target.is_file():
        found = read_status(target)
        statuses = [as_found(found)] if found else []
    else:
        statuses = [as_found(s) for s in all_statuses(target)]
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
        click.echo(s.describe())


@cli.command()
@_path_arg
@click.option("--wait", default=5.0, show_default=True, help="Seconds to wait for the stop.")
def cancel(path: Path, wait: float) -> None:
    """Cancel the turn streaming into PATH (the partial reply is kept, marked interrupted)."""
    from agentdoc.turn import read_status, request_cancel

    current = read_status(path)
    if current is None or current.state not in ("streaming", "waiting"):
        raise AgentdocError(f"no turn is streaming into {path}")
    request_cancel(path)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        now = read_status(path)
        if now is not None and now.state not in ("streaming", "waiting"):
            click.echo(f"cancelled the turn in {path}")
            return
        time.sleep(0.05)
    raise AgentdocError(f"asked to cancel {path}, but the turn has not stopped yet")


@cli.command()
@_path_arg
@click.option("--always", is_flag=True, help="Allow this tool for the rest of the session.")
def approve(path: Path, always: bool) -> None:
    """Allow the tool use that waits for permission in PATH."""
    from agentdoc.turn import request_answer

    request_answer(path, "always" if always else "allow")
    click.echo(f"answered the permission request in {path}: allow")


@cli.command()
@_path_arg
@click.option("--message", "-m", default="", help="Why; Claude is told this.")
def deny(path: Path, message: str) -> None:
    """Refuse the tool use that waits for permission in PATH."""
    from agentdoc.turn import request_answer

    request_answer(path, "deny", message)
    click.echo(f"answered the permission request in {path}: deny")


@cli.command()
@click.argument("path", required=False, type=_PATHS, shell_complete=_complete_documents)
@click.option("--wait", default=15.0, show_default=True, help="Seconds to wait for the exit.")
def stop(path: Path | None, wait: float) -> None:
    """Stop the daemon that watches PATH (default: this folder)."""
    from agentdoc.daemon import stop_daemon

    click.echo(f"stopped agentdoc watch (pid {stop_daemon(path or Path.cwd(), wait)})")


@cli.command()
@click.argument(
    "path", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def doctor(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Check the Claude CLI, authentication, config and watch limits; say how to fix each.

    PATH is the folder you mean to watch (default: this folder), for the inotify watch limit.
    Exits 1 if a check fails (a "!" is a warning and does not).
    """
    from agentdoc.cli import doctor as checks

    report = checks.run_checks(path or Path.cwd())
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        checks.render(report, click.echo)
    ctx.exit(0 if report.ok else 1)


@cli.command()
@click.argument("name", required=False)
@click.option("--print", "print_it", is_flag=True, help="Print the recipe itself.")
def editor(name: str | None, print_it: bool) -> None:
    """Print where the installed recipe or plugin for editor NAME lives.

    Without NAME, list every recipe with its path. With --print, print the file itself (to
    redirect it where your editor wants it).
    """
    from agentdoc.cli import recipes

    click.echo(recipes.describe(name, print_it=print_it), nl=False)


def main(argv: list[str] | None = None) -> int:
    try:
        code = cli.main(args=argv, prog_name="agentdoc", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        # click's usage errors exit 2, the code for "the turn ran and failed": a mistyped
        # command line is a problem the user can fix, like any other (exit 1).
        return EXIT_USER_ERROR if isinstance(exc, click.UsageError) else exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except Exception:
        log.exception("unexpected error")
        return EXIT_UNEXPECTED
    return code if isinstance(code, int) else 0
