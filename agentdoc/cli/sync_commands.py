"""Commands about synced folders: which ones this machine answers (`trust`), which machine
answers a document (`adopt`), what stays out of the sync (`init-sync`)."""

from __future__ import annotations

from pathlib import Path

import click

from agentdoc.cli.group import cli, examples

# `init-sync --tool` reads the table of sync tools only when it is shown or used: loaded with
# this module, the table cost every command's start (`agentdoc --help` too) about 2.5 ms.


class _SyncTools(click.Choice):  # type: ignore[type-arg]  # not generic before click 8.2
    """The sync tools `init-sync` knows, from the table, when first asked."""

    def __init__(self) -> None:
        self.case_sensitive = True

    @property
    def choices(self) -> tuple[str, ...]:
        from agentdoc.synctools import INIT_SYNC_TOOLS

        return tuple(INIT_SYNC_TOOLS)

    @choices.setter
    def choices(self, _value: object) -> None:
        raise AttributeError("the sync tools come from their table")


class _ToolOption(click.Option):
    """`--tool`, whose help names the tools nothing in a folder tells apart."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from agentdoc.synctools import INIT_SYNC_TOOLS, TOOLS

        unmarked = " and ".join(name for name in INIT_SYNC_TOOLS if TOOLS[name].unmarked)
        self.help = f"The sync tool ({unmarked} leave no mark to find them by)."
        return super().get_help_record(ctx)


@cli.command(
    "trust",
    epilog=examples(
        "agentdoc trust ~/Sync/notes",
        "agentdoc trust --list",
    ),
)
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--list", "listing", is_flag=True, help="List the folders trusted here.")
@click.option("--remove", is_flag=True, help="Stop answering prompts in PATH.")
def trust_command(path: Path | None, listing: bool, remove: bool) -> None:
    """Answer prompts saved in the synced folder PATH on this machine.

    Until a synced folder is trusted, `agentdoc watch` holds its prompts: anyone who can write
    into it could otherwise run the agent with this machine's credentials. The list is kept in
    your own config file (`trusted = [...]`), never in the folder; a running daemon sees the
    change within a second and sends the prompts it held.
    """
    from agentdoc.config import config_path
    from agentdoc.daemon import gone, trust_folder, trusted_list, untrust_folder

    if listing:
        if path is not None or remove:
            raise click.UsageError("--list takes no PATH and no --remove")
        entries = trusted_list()
        missing = set(gone(entries))
        for entry in entries:
            click.echo(f"{entry} (no longer exists)" if entry in missing else entry)
        return
    if path is None:
        raise click.UsageError("name the synced folder: agentdoc trust PATH (or --list)")
    if remove:
        click.echo(f"no longer trusted: {untrust_folder(path)} (in {config_path()})")
        return
    folder, new = trust_folder(path)
    click.echo(f"{'trusted' if new else 'already trusted'}: {folder} (in {config_path()})")


@cli.command(
    "adopt",
    epilog=examples(
        "agentdoc adopt ~/Sync/notes/chat.md",
    ),
)
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def adopt_command(path: Path) -> None:
    """Answer the synced document PATH on this machine from now on.

    In a synced folder one machine answers each document: the one that claimed it first or
    adopted it last. Other machines running `agentdoc watch` hold its prompts and say which
    machine answers it.
    """
    from agentdoc.config import load_settings
    from agentdoc.daemon import adopt, machine_id, synced_root
    from agentdoc.errors import AgentdocError

    if synced_root(path, load_settings()) is None:
        raise AgentdocError(
            f"{path} is not in a synced folder (no sync tool's marker above it, not in the "
            "config's `synced` list): this machine already answers it"
        )
    claim = adopt(path, machine_id())
    click.echo(f"{path} is answered by this machine now: {claim.who}")


@cli.command(
    "init-sync",
    epilog=examples(
        "agentdoc init-sync ~/Sync/notes --tool syncthing",
    ),
)
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--tool", cls=_ToolOption, type=_SyncTools())
def init_sync_command(path: Path | None, tool: str | None) -> None:
    """Keep agentdoc's local state (`.agentdoc/`) in PATH out of its sync.

    Writes the ignore entries for the sync tool found (Syncthing's `.stignore`, Nextcloud's
    `.sync-exclude.lst`, git's `.gitignore`, a filters file for rclone; for unison, the
    profile lines to add); the claims in `.agentdoc-claims/` travel.
    """
    from agentdoc.config import load_settings
    from agentdoc.daemon import init_sync

    target = path or Path.cwd()
    done = init_sync(target, load_settings(), tool)
    if done.file is not None:
        added = f"added {', '.join(done.added)}" if done.added else "already set"
        click.echo(f"{done.file}: {added}")
    for step in done.todo:
        click.echo(f"then {step}")
