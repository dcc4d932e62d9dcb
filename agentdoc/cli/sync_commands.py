"""Commands about synced folders: which ones this machine answers (`trust`)."""

from __future__ import annotations

from pathlib import Path

import click

from agentdoc.cli.group import cli


@cli.command("trust")
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
    from agentdoc.daemon import trust_folder, trusted_list, untrust_folder

    if listing:
        if path is not None or remove:
            raise click.UsageError("--list takes no PATH and no --remove")
        for entry in trusted_list():
            click.echo(entry)
        return
    if path is None:
        raise click.UsageError("name the synced folder: agentdoc trust PATH (or --list)")
    if remove:
        click.echo(f"no longer trusted: {untrust_folder(path)} (in {config_path()})")
        return
    folder, new = trust_folder(path)
    click.echo(f"{'trusted' if new else 'already trusted'}: {folder} (in {config_path()})")
