"""Commands over a document's history: fork, archive, undo."""

from __future__ import annotations

from pathlib import Path

import click

from agentdoc.cli.group import cli, complete_documents, examples, path_arg
from agentdoc.errors import require_existing


@cli.command(
    "fork",
    epilog=examples(
        "agentdoc fork chat.md idea-b.md",
        "agentdoc fork chat.md retry.md --turn 3",
    ),
)
@path_arg
@click.argument(
    "new", type=click.Path(dir_okay=False, path_type=Path), shell_complete=complete_documents
)
@click.option("--turn", type=int, help="Copy exchanges 1..TURN (default: all completed ones).")
def fork_command(path: Path, new: Path, turn: int | None) -> None:
    """Copy the conversation in PATH into a new document NEW, with its lineage.

    NEW's next prompt continues in a fork of the agent's session, cut at TURN (an agent that
    cannot branch there gets a new session seeded with NEW's transcript). PATH and its session
    are left untouched.
    """
    from agentdoc.cli.foreground import refuse_byproduct
    from agentdoc.config import load_settings
    from agentdoc.conversation import fork

    refuse_byproduct(path)  # a sync tool's copy never continues the session it holds
    plan = fork(path, new, turn, allow_cwd_outside=load_settings().allow_cwd_outside)
    how = "a fork of its session" if plan.lineage.fork_session else "a new session"
    click.echo(
        f"created {new} from {path} (exchanges 1-{plan.turn}); write your prompt under the "
        f"last `## User`, then `agentdoc run {new}` (it continues in {how})"
    )


@cli.command(
    "archive",
    epilog=examples(
        "agentdoc archive chat.md            # keeps the last exchanges",
        "agentdoc archive chat.md --keep 2",
    ),
)
@path_arg
@click.option(
    "--keep", type=click.IntRange(min=0), default=3, show_default=True, help="Exchanges to keep."
)
def archive_command(path: Path, keep: int) -> None:
    """Move all but the last KEEP exchanges of PATH into PATH's archive file, byte for byte.

    The archive (NAME.archive.md beside PATH, linked from it) is not a session document. The
    session goes on; a rebuilt session still gets the archived exchanges as history.
    """
    from agentdoc.cli.foreground import refuse_byproduct
    from agentdoc.conversation import archive_document
    from agentdoc.document import archive_path

    require_existing(path)
    refuse_byproduct(path)
    moved = archive_document(path, keep)
    click.echo(f"moved {moved.moved} exchange(s) of {path} into {archive_path(path)}")


@cli.command(
    epilog=examples(
        "agentdoc undo chat.md",
        "agentdoc undo chat.md 2   # the last two turns",
    ),
)
@path_arg
@click.argument("count", type=click.IntRange(min=1), default=1, required=False)
@click.option(
    "--force", is_flag=True, help="Put the files back even where they changed after the turn."
)
def undo(path: Path, count: int, force: bool) -> None:
    """Take the last COUNT turns of PATH back (default 1): their replies, every file they
    created, changed or deleted (whatever tool or command did it), the session's memory of them.

    The first undone prompt stays under the last `## User`, pending, for you to edit and send
    again; the later ones are kept in `.agentdoc/NAME.undone.md`. Refuses, saying why, when a
    turn streams, or when a file a turn wrote changed since (unless --force).
    """
    from agentdoc.cli.foreground import refuse_byproduct
    from agentdoc.config import load_settings
    from agentdoc.conversation import undo as undo_turn
    from agentdoc.daemon import own_command

    require_existing(path)
    refuse_byproduct(path)
    settings = load_settings()
    done = undo_turn(path, settings, clear=own_command(path, settings), count=count, force=force)
    last = done.turn + done.count - 1
    which = f"turn {done.turn}" if done.count == 1 else f"turns {done.turn}-{last}"
    files = ""
    if done.restored:  # a count, unless the agent restored them (turns before snapshots)
        files = f"; {done.files} file(s) restored" if done.files >= 0 else "; files restored"
    git = "; committed" if done.committed else ""
    click.echo(
        f"took {which} of {path} back{files}{git}; turn {done.turn}'s prompt is pending again"
    )
