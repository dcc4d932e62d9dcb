"""The click group every command joins, and what several commands share.

The group turns user-facing errors into click errors; each command module imports what it uses
only when it runs: `--help`, `status` or `stop` should not pay for loading the parser, the models
and the watcher (about 0.4 s) before doing a few milliseconds of work.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from agentdoc import __version__
from agentdoc.errors import AgentdocError

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


def complete_documents(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion for document arguments: markdown files and folders (to go into)."""
    from agentdoc.cli.completion import document_candidates

    return document_candidates(incomplete)


def complete_presets(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from agentdoc.cli.completion import preset_candidates

    return preset_candidates(incomplete)


def complete_agents(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from agentdoc.cli.completion import agent_candidates

    return agent_candidates(incomplete)


def complete_editors(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from agentdoc.cli.completion import editor_candidates

    return editor_candidates(incomplete)


def examples(*lines: str) -> str:
    """A command's `--help` epilog: real command lines (after a `#`, what one does)."""
    # \b keeps click from rewrapping the lines into one paragraph.
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


def _more_verbose(ctx: click.Context, param: click.Parameter, value: int) -> None:
    """`-v` after the command (`agentdoc watch -v`) adds to any given before it."""
    if value:
        configure_logging(ctx.find_root().params.get("verbose", 0) + value)


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` tells it: $COLUMNS, else the width of
    the terminal stdout is, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Context(click.Context):
    """click asks shutil for the terminal's width to lay out help; importing shutil (and the
    compression modules it brings) took a tenth of `agentdoc --help`'s own time."""

    def make_formatter(self) -> click.HelpFormatter:
        if self.terminal_width is None:
            self.terminal_width = _columns()
        return super().make_formatter()


class _Command(click.Command):
    """Every command also takes -v/--verbose, as git and gh take their common options anywhere."""

    context_class = _Context

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(
            click.Option(
                ["-v", "--verbose"],
                count=True,
                expose_value=False,
                callback=_more_verbose,
                help="More log output (-vv for debug).",
            )
        )


class ReaderGone(Exception):
    """stdout's reader closed the pipe before all was written."""


class _Group(click.Group):
    """Turns user-facing errors into click errors, so every command reports them the same way."""

    command_class = _Command
    context_class = _Context

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as exc:
            if not _stdout_closed():
                raise click.ClickException(_os_error(exc)) from exc  # some other pipe
            # The reader went away (`| head`): main() ends quietly. Not as an OSError, which
            # click's own main turns into exit 1.
            raise ReaderGone from exc
        except AgentdocError as exc:
            raise click.ClickException(str(exc)) from exc
        except OSError as exc:
            # A path the system refuses (too long, no permission, a loop of links) is the
            # user's to fix: one line that names it, not a traceback.
            raise click.ClickException(_os_error(exc)) from exc


def _stdout_closed() -> bool:
    """Whether stdout is a pipe its reader has closed (the write end then polls as an error)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError):
        return False


def _os_error(exc: OSError) -> str:
    where = f"{exc.filename}: " if exc.filename else ""
    if len(where) > 120:  # a 300-byte name would fill the terminal; its end identifies it
        where = f"…{where[-100:]}"
    return f"{where}{exc.strerror or exc}"


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=examples(
        "agentdoc new chat.md            # then write a prompt under `## User` and save",
        "agentdoc run chat.md            # answer it here",
        "agentdoc watch ~/notes          # or answer every saved prompt under ~/notes",
        'agentdoc ask chat.md "Why does the test fail?"',
        "agentdoc COMMAND --help         # each command's options and examples",
    ),
)
@click.version_option(__version__, prog_name="agentdoc")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def cli(verbose: int) -> None:
    """Keep a conversation with a coding agent in a markdown file.

    Write a prompt under the last `## User` heading of a session document, then run
    `agentdoc run FILE` (or keep `agentdoc watch` running): the reply streams into the file.
    """
    configure_logging(verbose)
    if sys.platform == "win32":
        # The tree lock (flock), process groups and permissions are POSIX: say so up front
        # rather than fail half-way through a turn.
        raise AgentdocError(
            "agentdoc runs on Linux and macOS; on Windows, run it inside WSL "
            "(Windows Subsystem for Linux)"
        )


def configure_logging(verbose: int) -> None:
    """The terminal's log level and line shape for -v counted `verbose` times."""
    import logging  # here, not at the top: `agentdoc --help` never needs it

    from agentdoc.cli.logs import Escaping, OneLine, is_log_file

    level = logging.WARNING - 10 * min(verbose, 2)
    # What a user reads says what happened, not which module said it; -vv is for debugging.
    shape = "%(levelname)s %(name)s: %(message)s" if verbose >= 2 else "%(levelname)s: %(message)s"
    logging.basicConfig(level=level, format=shape)
    logging.getLogger().setLevel(level)
    for chatty in ("markdown_it", "watchdog", "asyncio"):
        # Their debug lines are about their own internals, thousands per save: -vv is ours.
        logging.getLogger(chatty).setLevel(max(level, logging.INFO))
    for handler in logging.getLogger().handlers:
        if not is_log_file(handler):
            handler.setFormatter(OneLine(shape) if verbose < 2 else Escaping(shape))


def output_options(f: Callable[..., Any]) -> Callable[..., Any]:
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
path_arg = click.argument(
    "path", type=click.Path(path_type=Path), shell_complete=complete_documents
)

PATHS = click.Path(exists=True, path_type=Path)
