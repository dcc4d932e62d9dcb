"""Commands about the watch daemon: watch, status, stop."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from agentdoc.cli.group import PATHS, cli, complete_documents
from agentdoc.errors import require_existing

if TYPE_CHECKING:
    from agentdoc.agents import SessionOptions
    from agentdoc.turn import Spent


@cli.command()
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
@click.option("--log-file", type=click.Path(dir_okay=False, path_type=Path), help="Also log here.")
def watch(
    paths: tuple[Path, ...],
    poll: bool,
    send_pending: bool,
    max_concurrent: int | None,
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
    "path", required=False, type=click.Path(path_type=Path), shell_complete=complete_documents
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_command(path: Path | None, as_json: bool) -> None:
    """What each document is doing: idle, queued, streaming, waiting or error."""
    from agentdoc.cli.agent_shown import options_of, user_settings
    from agentdoc.daemon import find_daemon, kept_copies
    from agentdoc.document import shown_name
    from agentdoc.turn import as_found, folder_statuses, read_status

    target = path or Path.cwd()
    require_existing(target)
    if target.is_file():
        found = read_status(target)
        if found is None:
            _check_session(target)
        statuses = [(target.parent, as_found(found))] if found else []
    else:
        statuses = [(folder, as_found(s)) for folder, s in folder_statuses(target)]
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
        import dataclasses  # only for --json: quick commands import only what they use
        import json

        report: dict[str, object] = {
            "daemon": (
                {"pid": holder.pid, "roots": holder.roots, "polling": holder.polling}
                if holder
                else None
            ),
            "documents": [s.model_dump() | {"agent": _as_json(o)} for s, o in rows],
            "merged_copies": [str(p) for p in copies],
        }
        if own is not None:
            report["agent"] = _as_json(own)
        if spent is not None:
            report["spent"] = dataclasses.asdict(spent)
        click.echo(json.dumps(report, indent=2))
        return
    click.echo(
        f"daemon: pid {holder.pid}, watching {', '.join(holder.roots)}"
        if holder
        else "daemon: not running"
    )
    if holder and holder.polling:
        click.echo(f"  polling: {holder.polling}")
    for s, shown in rows:
        brief = "" if own is not None or isinstance(shown, str) else f" — agent {shown.brief()}"
        click.echo(s.describe() + brief)
    if target.is_file() and not statuses:
        click.echo(f"{shown_name(target.name)}: idle (no turn has run in it yet)")
    if own is not None:
        click.echo("\n".join(own.lines()) if not isinstance(own, str) else f"  agent: {own}")
    if spent is not None and spent.turns:
        click.echo(f"  {spent.describe()}")

    for copy in copies:
        click.echo(f"merged conflict copy, kept: {copy}")


def _spent(path: Path) -> Spent:
    """What the document's turns cost, the undone ones included (their money was spent)."""
    from agentdoc.turn import spent

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


@cli.command()
@click.argument("path", required=False, type=PATHS, shell_complete=complete_documents)
@click.option("--wait", default=15.0, show_default=True, help="Seconds to wait for the exit.")
def stop(path: Path | None, wait: float) -> None:
    """Stop the daemon that watches PATH (default: this folder)."""
    from agentdoc.daemon import stop_daemon

    click.echo(f"stopped agentdoc watch (pid {stop_daemon(path or Path.cwd(), wait)})")
