"""Commands that send, stop or answer a turn: new, start, resume, run, cancel, approve, deny."""

from __future__ import annotations

import time
from pathlib import Path

import click

from agentdoc.cli.group import (
    cli,
    complete_agents,
    complete_documents,
    complete_presets,
    examples,
    output_options,
    path_arg,
)
from agentdoc.errors import AgentdocError


@cli.command(
    epilog=examples(
        "agentdoc new notes/rust.md",
        "agentdoc new review.md --agent mine --preset reviewer  # [agents.mine] of your config",
    ),
)
@click.argument(
    "path", type=click.Path(dir_okay=False, path_type=Path), shell_complete=complete_documents
)
@click.option("--title", help="Title (frontmatter and first heading); default: the file name.")
@click.option("--model", help="Model for this document (alias such as sonnet, or a full name).")
@click.option(
    "--agent",
    help="Agent that answers: a built-in or your own (`agentdoc doctor` lists them).",
    shell_complete=complete_agents,
)
@click.option(
    "--preset",
    metavar="NAME",
    help="Preset (see `agentdoc presets`) this document starts from.",
    shell_complete=complete_presets,
)
def new(
    path: Path, title: str | None, model: str | None, agent: str | None, preset: str | None
) -> None:
    """Create a new session document at PATH, ready for the first prompt."""
    from agentdoc.conversation import create_document

    _check_name(path)
    create_document(path, title=title, model=model, agent=agent, preset=preset)
    click.echo(f"created {path}: write your prompt under `## User`, then `agentdoc run {path}`")


def _check_name(path: Path) -> None:
    """Refuse a name `agentdoc watch` never reads: a document it made would never be answered."""
    from agentdoc.daemon import wanted_name

    if wanted_name(path.name):
        return
    why = f"{path}: `agentdoc watch` never answers a file by this name"
    if path.suffix.lower().startswith((".md", ".markdown")):
        # A sidecar's, an editor's or a sync tool's name: no other name is ours to guess.
        raise AgentdocError(f"{why} (it is kept for thinking sidecars, editors or sync copies)")
    markdown = path.with_name(path.stem + ".md" if path.suffix else path.name + ".md")
    raise AgentdocError(
        f"{why}: a session document is a markdown file (.md or .markdown); "
        f"`agentdoc new {markdown}` makes one"
    )


@cli.command(
    epilog=examples(
        "agentdoc start chat.md          # the pending prompt, in a fresh session",
    ),
)
@path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@output_options
@click.pass_context
def start(
    ctx: click.Context, path: Path, model: str | None, print_reply: bool, quiet: bool
) -> None:
    """Send the pending prompt as the first turn of a NEW agent session.

    This is the clean rebuild: if the document already has history, the new session is given
    its transcript (as the document shows it now), and the document continues in that session.
    """
    from agentdoc.cli.foreground import run_turn

    ctx.exit(run_turn(path, "start", model=model, print_reply=print_reply, quiet=quiet))


@cli.command(
    epilog=examples(
        "agentdoc resume chat.md",
        "agentdoc resume chat.md --session 1c0e5d6a-9a8e-4a51-a4c4-1bc2a8c0f4f5",
    ),
)
@path_arg
@click.option("--session", help="Resume this session id instead of the stored one.")
@click.option("--model", help="Model for this turn (beats the document's).")
@output_options
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


@cli.command(
    epilog=examples(
        "agentdoc run chat.md",
        "agentdoc run chat.md --model opus | less   # the reply on stdout",
    ),
)
@path_arg
@click.option("--model", help="Model for this turn (beats the document's).")
@output_options
@click.pass_context
def run(ctx: click.Context, path: Path, model: str | None, print_reply: bool, quiet: bool) -> None:
    """Resume the document's session if it has one, else start one (for editor hotkeys).

    The reply streams into the document; when stdout is a pipe or a file it streams there too
    (just the reply's text), and with --print also into the terminal.
    """
    from agentdoc.cli.foreground import run_turn

    ctx.exit(run_turn(path, "run", model=model, print_reply=print_reply, quiet=quiet))


@cli.command(
    epilog=examples(
        "agentdoc cancel chat.md",
    ),
)
@path_arg
@click.option("--wait", default=5.0, show_default=True, help="Seconds to wait for the stop.")
def cancel(path: Path, wait: float) -> None:
    """Cancel the turn streaming into PATH (the partial reply is kept, marked interrupted)."""
    from agentdoc.records import read_status, request_cancel

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


@cli.command(
    epilog=examples(
        "agentdoc approve chat.md",
        "agentdoc approve --always chat.md   # and for the rest of the session",
    ),
)
@path_arg
@click.option("--always", is_flag=True, help="Allow this tool for the rest of the session.")
def approve(path: Path, always: bool) -> None:
    """Allow the tool use that waits for permission in PATH."""
    from agentdoc.turn import request_answer

    request_answer(path, "always" if always else "allow")
    click.echo(f"answered the permission request in {path}: allow")


@cli.command(
    epilog=examples(
        'agentdoc deny chat.md -m "write it under build/ instead"',
    ),
)
@path_arg
@click.option("--message", "-m", default="", help="Why; the agent is told this.")
def deny(path: Path, message: str) -> None:
    """Refuse the tool use that waits for permission in PATH."""
    from agentdoc.turn import request_answer

    request_answer(path, "deny", message)
    click.echo(f"answered the permission request in {path}: deny")
