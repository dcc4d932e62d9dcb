"""The command line's entry point: every command on one click group, errors mapped to exit codes.

The commands live by what they do: turns (`turn_commands`), a document's history
(`history_commands`), the daemon (`daemon_commands`) and setting up (`setup_commands`).
"""

from __future__ import annotations

import sys

import click

from agentdoc.cli import (
    daemon_commands,
    history_commands,
    query_commands,
    setup_commands,
    sync_commands,
    turn_commands,
)
from agentdoc.cli.group import ReaderGone, cli
from agentdoc.errors import EXIT_INTERRUPTED, EXIT_UNEXPECTED, EXIT_USER_ERROR

# Imported for the commands they add to `cli`.
COMMANDS = (
    turn_commands,
    history_commands,
    daemon_commands,
    setup_commands,
    query_commands,
    sync_commands,
)

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> int:
    try:
        code = cli.main(args=argv, prog_name="agentdoc", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        # click's usage errors exit 2, the code for "the turn ran and failed": a mistyped
        # command line is a problem the user can fix, like any other (exit 1).
        return EXIT_USER_ERROR if isinstance(exc, click.UsageError) else exc.exit_code
    except ReaderGone:
        # `agentdoc status | head -1`: the reader has what it wanted. As grep and ripgrep
        # do, end quietly; stdout goes to /dev/null so the exit's own flush cannot fail.
        _drop_stdout()
        return 0
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    except Exception as exc:
        _report_unexpected(exc)
        return EXIT_UNEXPECTED
    return code if isinstance(code, int) else 0


def _drop_stdout() -> None:
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # not a real file (a test's capture): nothing will flush into a closed pipe


def _report_unexpected(exc: Exception) -> None:
    """One line on the terminal, the traceback in the log file too: what a report needs."""
    import logging  # only for this: `agentdoc --help` never loads it

    from agentdoc.cli.logs import log_path, open_log_file

    root = logging.getLogger()
    path = log_path()
    logged = any(getattr(h, "baseFilename", None) == str(path.absolute()) for h in root.handlers)
    handler = None
    if not logged:  # `watch` has it open already
        try:
            handler = open_log_file(path, rotate=True)
        except OSError:
            pass  # a state folder that cannot be written: the terminal has the one line
        else:
            root.addHandler(handler)
    where = f" (the details are in {path}: please report it with them)" if handler or logged else ""
    try:
        logging.getLogger(__name__).error("unexpected error: %s%s", exc, where, exc_info=exc)
    finally:
        if handler is not None:
            root.removeHandler(handler)
            handler.close()
