"""Commands about the watch daemon: watch, status, stop, logs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentdoc.cli.group import PATHS, cli, complete_documents, examples
from agentdoc.errors import EXIT_INTERRUPTED, require_existing

if TYPE_CHECKING:
    from agentdoc.agents import SessionOptions
    from agentdoc.records import Spent, Status


@cli.command(
    epilog=examples(
        "agentdoc watch                # this folder",
        "agentdoc watch ~/notes -v",
        "agentdoc watch --poll /mnt/share",
    ),
)
@click.argument("paths", nargs=-1, type=PATHS, shell_complete=complete_documents)
@click.option("--poll", is_flag=True, help="Poll for changes (network drives, WSL, containers).")
@click.option(
    "--send-pending",
    is_flag=True,
    help="Also send prompts that were already pending when the daemon started.",
)
@click.option(
    "--max-concurrent",
    type=click.IntRange(1, 256),
    default=None,
    help="Turns streaming at once (default: max_concurrent_turns in the config, 4).",
)
@click.option(
    "--log-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Log here instead of the state folder's watch.log (see `agentdoc logs`).",
)
@click.option("--no-log-file", is_flag=True, help="Log to the terminal only.")
@click.option(
    "--serve",
    "serve",
    is_flag=False,
    flag_value="127.0.0.1:8765",
    default=None,
    metavar="[ADDR]",
    help="Also serve the web page (default address 127.0.0.1:8765; any other needs the token).",
)
@click.option("--read-only", is_flag=True, help="The page shows documents; nobody can prompt.")
@click.option("--token", "require_token", is_flag=True, help="Ask for the token on loopback too.")
@click.option("--cert", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="TLS.")
@click.option("--key", type=click.Path(dir_okay=False, exists=True, path_type=Path), help="TLS.")
def watch(
    paths: tuple[Path, ...],
    poll: bool,
    send_pending: bool,
    max_concurrent: int | None,
    log_file: Path | None,
    no_log_file: bool,
    serve: str | None,
    read_only: bool,
    require_token: bool,
    cert: Path | None,
    key: Path | None,
) -> None:
    """Watch folders or files (default: this folder) and answer every saved prompt.

    Runs in the foreground until Ctrl-C or SIGTERM (systemd-friendly); running turns are then
    stopped and marked interrupted. Each document's state is in `.agentdoc/NAME.status.json`.
    With --serve (or `serve = "ADDR"` in the config) a web page shows the documents and
    takes prompts and answers, each an edit of the file.

    The log goes to the terminal and to watch.log in the state folder (rotated at 2 MiB, three
    old ones kept): `agentdoc logs` shows it.
    """
    from agentdoc.cli.foreground import watch_in_foreground
    from agentdoc.cli.logs import log_path
    from agentdoc.web import Serving

    if serve is not None and not _an_address(serve):
        paths, serve = (Path(serve), *paths), "127.0.0.1:8765"  # `--serve FOLDER`: a folder
    serving = None
    if serve is not None or read_only or require_token or cert or key:
        serving = Serving(
            serve or "127.0.0.1:8765", read_only=read_only, token=require_token, cert=cert, key=key
        )
    logged = None if no_log_file else log_file or log_path()
    watch_in_foreground(list(paths), poll, send_pending, max_concurrent, logged, serving)


def _an_address(value: str) -> bool:
    """`--serve` takes an optional address: a word that is no HOST:PORT or PORT is the first
    folder to watch (`agentdoc watch --serve ~/notes`)."""
    return value.isdigit() or (":" in value and not Path(value).exists())


@cli.command(
    "serve-token",
    epilog=examples(
        "agentdoc serve-token            # the token, made on first use",
        "agentdoc serve-token --renew    # a new one: pages with the old one must log in again",
    ),
)
@click.option("--renew", is_flag=True, help="Make a new token (the old one stops working).")
def serve_token_command(renew: bool) -> None:
    """Show the token the web page asks for on any address but 127.0.0.1 (made on first use).

    Open the page once as https://HOST:PORT/?token=TOKEN; the browser keeps it in a cookie.
    A daemon already serving keeps the old token until it restarts.
    """
    from agentdoc.web import serve_token, token_path

    click.echo(serve_token(renew=renew))
    click.echo(f"(kept in {token_path()})", err=True)


@cli.command(
    "status",
    epilog=examples(
        "agentdoc status",
        "agentdoc status chat.md --json | jq .spent",
    ),
)
@click.argument(
    "path", required=False, type=click.Path(path_type=Path), shell_complete=complete_documents
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_command(path: Path | None, as_json: bool) -> None:
    """What each document is doing: idle, queued, streaming, waiting or error."""
    from agentdoc.cli.agent_shown import options_of, user_settings
    from agentdoc.cli.names import document_name
    from agentdoc.daemon import find_daemon, kept_copies
    from agentdoc.document import shown_name

    target = path or Path.cwd()
    require_existing(target)
    statuses = _statuses(target)
    settings = user_settings()
    rows = [
        (s, options_of(target if target.is_file() else folder / s.document, settings))
        for folder, s in statuses
    ]
    own = options_of(target, settings) if target.is_file() else None
    spent = _spent(target) if target.is_file() else None
    holder = find_daemon(target)
    copies = kept_copies(target)  # sync tools' conflict copies merged into documents
    if as_json:
        daemon = (
            {
                "pid": holder.pid,
                "roots": holder.roots,
                "polling": holder.polling,
                "settings": holder.settings,
            }
            if holder
            else None
        )
        click.echo(_status_json(daemon, rows, copies, own, spent))
        return
    click.echo(
        f"daemon: pid {holder.pid}, watching {', '.join(holder.roots)}"
        if holder
        else "daemon: not running"
    )
    if holder and holder.polling:
        click.echo(f"  polling: {holder.polling}")
    if holder and holder.settings:
        click.echo(f"  settings: {holder.settings}")
    for (folder, s), (_, shown) in zip(statuses, rows, strict=True):
        brief = "" if own is not None or isinstance(shown, str) else f" — agent {shown.brief()}"
        # Under a folder, a document is named by its path in it: two `chat.md` differ.
        name = None if target.is_file() else document_name(folder / s.document, [target])
        click.echo(s.describe(name) + brief)
    if target.is_file() and not statuses:
        click.echo(f"{shown_name(target.name)}: idle (no turn has run in it yet)")
    if own is not None:
        click.echo("\n".join(own.lines()) if not isinstance(own, str) else f"  agent: {own}")
    if spent is not None and spent.turns:
        click.echo(f"  {spent.describe()}")

    for copy in copies:
        click.echo(f"merged conflict copy, kept: {copy}")


def _statuses(target: Path) -> list[tuple[Path, Status]]:
    """The statuses of the document `target`, or of every document under the folder `target`,
    each with its folder."""
    from agentdoc.records import as_found, folder_statuses, read_status

    if not target.is_file():
        return [(folder, as_found(s)) for folder, s in folder_statuses(target)]
    found = read_status(target)
    if found is None:
        _check_session(target)
    return [(target.parent, as_found(found))] if found else []


def _status_json(
    daemon: dict[str, object] | None,
    rows: list[tuple[Status, SessionOptions | str]],
    copies: list[Path],
    own: SessionOptions | str | None,
    spent: Spent | None,
) -> str:
    import dataclasses  # only for --json: quick commands import only what they use
    import json

    report: dict[str, object] = {
        "daemon": daemon,
        "documents": [s.model_dump() | {"agent": _as_json(o)} for s, o in rows],
        "merged_copies": [str(p) for p in copies],
    }
    if own is not None:
        report["agent"] = _as_json(own)
    if spent is not None:
        report["spent"] = dataclasses.asdict(spent)
    return json.dumps(report, indent=2)


def _spent(path: Path) -> Spent:
    """What the document's turns cost, the undone ones included (their money was spent)."""
    from agentdoc.records import spent

    return spent(path)


def _as_json(options: SessionOptions | str) -> dict[str, object]:
    return {"error": options} if isinstance(options, str) else options.as_json()


def _check_session(path: Path) -> None:
    """A file without a status: say so when it is no session document (rather than print
    nothing, as for one no turn has run in yet)."""
    from agentdoc.document import is_session_document, read_text, shown_name
    from agentdoc.errors import AgentdocError

    if not is_session_document(read_text(path)):
        raise AgentdocError(
            f"{shown_name(path.name)} is not a session document (its frontmatter has no "
            "`agentdoc:` key); `agentdoc new FILE` creates one"
        )


@cli.command(
    epilog=examples(
        "agentdoc stop",
        "agentdoc stop ~/notes",
    ),
)
@click.argument("path", required=False, type=PATHS, shell_complete=complete_documents)
@click.option("--wait", default=15.0, show_default=True, help="Seconds to wait for the exit.")
def stop(path: Path | None, wait: float) -> None:
    """Stop the daemon that watches PATH (default: this folder)."""
    from agentdoc.daemon import stop_daemon

    click.echo(f"stopped agentdoc watch (pid {stop_daemon(path or Path.cwd(), wait)})")


@cli.command(
    epilog=examples(
        "agentdoc logs            # the last 50 lines",
        "agentdoc logs -f         # and the lines that follow (Ctrl-C to stop)",
        "agentdoc logs -n 0 | grep chat.md",
    )
)
@click.option("-f", "--follow", is_flag=True, help="Keep printing lines as they are logged.")
@click.option(
    "-n",
    "--lines",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="How many of the last lines to show (0: all).",
)
@click.option("--path", "only_path", is_flag=True, help="Print where the log file is.")
@click.pass_context
def logs(ctx: click.Context, follow: bool, lines: int, only_path: bool) -> None:
    """Show the log `agentdoc watch` keeps in the state folder (watch.log)."""
    from agentdoc.cli import logs as log_file

    path = log_file.log_path()
    if only_path:
        click.echo(path)
        return
    import sys

    out = sys.stdout.buffer
    shown, end = log_file.last_lines(path, lines)
    out.write(shown)
    out.flush()
    if not follow:
        if not path.exists():
            click.echo(f"no log yet: `agentdoc watch` writes it to {path}", err=True)
        return
    try:
        log_file.follow(path, out, start=end)
    except KeyboardInterrupt:
        ctx.exit(EXIT_INTERRUPTED)  # Ctrl-C is how one stops following: nothing to say
