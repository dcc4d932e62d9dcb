"""Commands that help set agentdoc up: demo, doctor, editor."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from agentdoc.cli.group import cli, complete_editors, examples


@cli.command(
    epilog=examples(
        "agentdoc demo",
        "agentdoc demo --delay 0",
    ),
)
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


@cli.command(
    epilog=examples(
        "agentdoc doctor",
        "agentdoc doctor notes/chat.md   # the agent this document uses",
    ),
)
@click.argument(
    "path", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def doctor(ctx: click.Context, path: Path | None, as_json: bool) -> None:
    """Check the agent CLIs, authentication, config and watch limits; say how to fix each.

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


@cli.command(
    epilog=examples(
        "agentdoc editor",
        "agentdoc editor vim     # where the Vim recipe is, to source from your vimrc",
    ),
)
@click.argument("name", required=False, shell_complete=complete_editors)
@click.option("--print", "print_it", is_flag=True, help="Print the recipe itself.")
def editor(name: str | None, print_it: bool) -> None:
    """Print where the installed recipe or plugin for editor NAME lives.

    Without NAME, list every recipe with its path. With --print, print the file itself (to
    redirect it where your editor wants it).
    """
    from agentdoc.cli import recipes

    click.echo(recipes.describe(name, print_it=print_it), nl=False)
