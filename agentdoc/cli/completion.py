"""Shell completion of document paths, preset, agent and editor names.

click completes the commands and options by itself; this narrows path arguments to what they
take, so `agentdoc run no<Tab>` offers `notes/` and `notes.md`, not `notes.pdf`, and offers the
names `--preset`, `--agent` and `agentdoc editor` take.
"""

from __future__ import annotations

import os
from pathlib import Path

from click.shell_completion import CompletionItem

MARKDOWN_SUFFIXES = (".md", ".markdown")


def document_candidates(incomplete: str) -> list[CompletionItem]:
    folder, sep, start = incomplete.rpartition(os.sep)
    base = Path(folder + sep if sep else ".")
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    items: list[CompletionItem] = []
    for entry in entries:
        name = entry.name
        # Hidden entries (.agentdoc/, .git/) only when asked for with a leading dot.
        if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
            continue
        shown = f"{folder}{sep}{name}"
        if entry.is_dir():
            items.append(CompletionItem(shown + os.sep))
        elif name.endswith(MARKDOWN_SUFFIXES) and not name.endswith(".thinking.md"):
            items.append(CompletionItem(shown))
    return items


def _starting(names: list[str], incomplete: str) -> list[CompletionItem]:
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def preset_candidates(incomplete: str) -> list[CompletionItem]:
    """The presets in `presets/` beside the config file."""
    from agentdoc.turn import list_presets

    return _starting([name for name, _ in list_presets()], incomplete)


def agent_candidates(incomplete: str) -> list[CompletionItem]:
    """The built-in agents and the config's own; none when the config cannot be read."""
    from agentdoc.agents import known_agents
    from agentdoc.config import load_settings
    from agentdoc.errors import AgentdocError

    try:
        names = list(known_agents(load_settings()))
    except AgentdocError:
        return []  # a broken config is `agentdoc doctor`'s to report, not a Tab's
    return _starting(names, incomplete)


def editor_candidates(incomplete: str) -> list[CompletionItem]:
    """The editors `agentdoc editor` has a recipe for, by their names (not their aliases)."""
    from agentdoc.cli.recipes import RECIPES

    return _starting(list(RECIPES), incomplete)
