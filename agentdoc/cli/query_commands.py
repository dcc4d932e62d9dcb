"""Commands that reach a document from outside it: ask, search, presets."""

from __future__ import annotations

from pathlib import Path

import click

from agentdoc.cli.group import cli, complete_documents, complete_presets, examples
from agentdoc.errors import AgentdocError


@cli.command(
    epilog=examples(
        'agentdoc ask chat.md "What does this error mean?"',
        "git diff | agentdoc ask --new review.md -",
        'agentdoc ask chat.md "Summarise" -q && cat chat.md',
    ),
)
@click.argument("path", type=click.Path(path_type=Path), shell_complete=complete_documents)
@click.argument("prompt")
@click.option("--new", "create", is_flag=True, help="Create the document first if it is missing.")
@click.option(
    "--preset",
    metavar="NAME",
    help="With --new: the preset the new document starts from.",
    shell_complete=complete_presets,
)
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors (not the reply).")
# The reply is always printed now; -p stays accepted for the scripts that gave it.
@click.option("-p", "--print", "print_reply", is_flag=True, hidden=True)
@click.pass_context
def ask(
    ctx: click.Context,
    path: Path,
    prompt: str,
    create: bool,
    preset: str | None,
    print_reply: bool,
    quiet: bool,
) -> None:
    """Add PROMPT under the last `## User` of PATH, run it and print the reply (PROMPT `-`:
    read stdin).

    When an `agentdoc watch` covers PATH, it answers and this waits for the reply (Ctrl-C
    cancels the turn); otherwise the turn runs here as `agentdoc run --print` runs it. The
    reply is also in the document, as always.
    """
    from agentdoc.cli.ask import ask as ask_in
    from agentdoc.cli.ask import read_prompt
    from agentdoc.conversation import create_document

    text = read_prompt(prompt)
    if create and not path.exists():
        create_document(path, preset=preset)
    elif preset is not None:
        raise AgentdocError("--preset is for a new document (with --new); set `preset:` in it")
    elif not path.exists():
        raise AgentdocError(f"{path} does not exist; add --new to create it")
    ctx.exit(ask_in(path, text, quiet=quiet))


@cli.command(
    epilog=examples(
        "agentdoc presets",
        "agentdoc new notes.md --preset reviewer",
    ),
)
def presets() -> None:
    """List the presets in `presets/` beside your config file."""
    from agentdoc.turn import list_presets, presets_dir

    found = list_presets()
    if not found:
        click.echo(f"no presets yet: add NAME.md files to {presets_dir()}")
        return
    width = max(len(name) for name, _ in found)
    for name, about in found:
        click.echo(f"{name:<{width}}  {about}".rstrip())


@cli.command(
    epilog=examples(
        'agentdoc search "race condition"',
        "agentdoc search --replies 'sqlite*' notes/",
        "vim -q <(agentdoc search --vimgrep flock)",
    ),
)
@click.argument("query")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--prompts", "where", flag_value="prompts", help="Search only the prompts.")
@click.option("--replies", "where", flag_value="replies", help="Search only the replies.")
@click.option("--thinking", is_flag=True, help="Search the thinking sidecars too.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--vimgrep", is_flag=True, help="FILE:LINE:COLUMN:TEXT lines, for quickfix lists.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Most hits shown (0: all).",
)
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    paths: tuple[Path, ...],
    where: str | None,
    thinking: bool,
    as_json: bool,
    vimgrep: bool,
    limit: int,
) -> None:
    """Find QUERY's words in the conversations under PATHS (default: this folder).

    One hit per matching exchange, newest first, as `FILE#turn-N: line` (`FILE: line` for a
    document's title); archives are searched with their documents, agentdoc's own footers and
    notices are not. A word ending in * matches as a prefix; "a phrase" in quotes. Exits 1 when
    nothing matches, as grep does.
    """
    import sqlite3

    from agentdoc.cli.found import show_hits
    from agentdoc.search import connect, document_of, index_path, key, refresh, search

    roots = [document_of(p) for p in paths] or [Path.cwd()]
    try:
        conn = connect()
        try:
            refresh(conn, roots)
            hits = search(
                conn,
                query,
                [key(r) for r in roots],
                where="prompts" if where == "prompts" else "replies" if where else "all",
                thinking=thinking,
                limit=limit,
            )
        finally:
            conn.close()
    except sqlite3.Error as exc:
        # A full disk, a read-only state folder, an SQLite built without FTS5: say which file.
        raise AgentdocError(f"cannot use the search index {index_path()}: {exc}") from exc
    show_hits(hits, "json" if as_json else "vimgrep" if vimgrep else "text")
    ctx.exit(0 if hits else 1)
