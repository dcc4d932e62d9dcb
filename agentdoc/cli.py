"""The command line: a thin click layer over turn, session and daemon."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import click

from agentdoc import __version__, frontmatter
from agentdoc.config import load_settings
from agentdoc.errors import (
    EXIT_INTERRUPTED,
    EXIT_TURN_FAILED,
    EXIT_UNEXPECTED,
    AgentdocError,
)
from agentdoc.session import Mode
from agentdoc.terminal import ProgressLine
from agentdoc.turn import TurnRunner

log = logging.getLogger(__name__)


class _Group(click.Group):
    """Turns user-facing errors into click errors, so every command reports them the same way."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentdocError as exc:
            raise click.ClickException(str(exc)) from exc


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
    body = f"# {title}\n\n## User\n\n"
    text = frontmatter.add_frontmatter(body, meta, {"title": title})
    path.write_text(text, encoding="utf-8")
    click.echo(f"created {path}: write your prompt under `## User`, then `agentdoc run {path}`")


def _run_turn(path: Path, mode: Mode, session: str | None = None, model: str | None = None) -> int:
    settings = load_settings({"model": model})
    runner = TurnRunner(path, settings, mode=mode, session=session, on_progress=ProgressLine())
    outcome = runner.run()
    if outcome.state == "done":
        return 0
    if outcome.reply.error:
        click.echo(f"error: {outcome.reply.error}", err=True)
    return EXIT_TURN_FAILED


_path_arg = click.argument("path", type=click.Path(dir_okay=False, path_type=Path, exists=True))


@cli.command()
@_path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@click.pass_context
def start(ctx: click.Context, path: Path, model: str | None) -> None:
    """Send the pending prompt as the first turn of a NEW Claude session.

    If the document already has history, the new session is given its transcript.
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
