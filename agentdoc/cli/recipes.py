"""The editor recipes and service files shipped inside the package (`agentdoc editor NAME`).

They are package data under ``agentdoc/editors/``, so whoever installed agentdoc from the
package index (pipx, uv tool) has them too, at a path this module can name.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from agentdoc.errors import AgentdocError

# name → (file or folder under agentdoc/editors/, what it is)
RECIPES: dict[str, tuple[str, str]] = {
    "vim": ("agentdoc.vim", "Vim recipe: source it from your vimrc"),
    "neovim": ("nvim", "Neovim plugin: add this folder to 'runtimepath' or your plugin manager"),
    "emacs": ("agentdoc.el", "Emacs recipe: load it from your init file"),
    "vscode": ("vscode-tasks.json", "VS Code tasks: merge into .vscode/tasks.json"),
    "sublime": ("agentdoc.sublime-build", "Sublime Text build system: copy to Packages/User"),
    "systemd": ("agentdoc-watch.service", "systemd user unit for `agentdoc watch`"),
    "launchd": ("agentdoc-watch.plist", "launchd agent for `agentdoc watch` (macOS)"),
    "readme": ("README.md", "how to set up each editor, JetBrains and Obsidian included"),
}
ALIASES = {"nvim": "neovim", "code": "vscode", "service": "systemd"}


def editors_folder() -> Path:
    return Path(str(resources.files("agentdoc") / "editors"))


def locate(name: str) -> Path:
    """The installed copy of recipe `name` (a file, or the Neovim plugin's folder)."""
    key = ALIASES.get(name.lower(), name.lower())
    if key not in RECIPES:
        raise AgentdocError(
            f"no editor recipe called {name!r}; the recipes are: {', '.join(RECIPES)} "
            "(JetBrains and Obsidian need settings only: see `agentdoc editor readme`)"
        )
    path = editors_folder() / RECIPES[key][0]
    if not path.exists():
        raise AgentdocError(f"the {key} recipe should be at {path}, but it is missing")
    return path


def describe(name: str | None, *, print_it: bool = False) -> str:
    """What `agentdoc editor` prints: every recipe and its path, one path, or a recipe itself."""
    if name is None:
        return "".join(
            f"{key:8} {locate(key)}  ({what})\n" for key, (_file, what) in RECIPES.items()
        )
    path = locate(name)
    if not print_it:
        return f"{path}\n"
    if path.is_dir():
        raise AgentdocError(f"{path} is a folder (a plugin); point your editor at it")
    return path.read_text(encoding="utf-8")
