"""The files in a folder that agents started there read as their own settings or instructions.

An agent runs in the document's folder, and most read that folder's own files as they start:
settings that can run commands (Claude Code's hooks, MCP servers), permission rules, and
instructions the model follows. In a folder others write into (a sync tool's, a `git: sync`
repository) each is a way for them to steer the agent on this machine; `doctor` names the ones
it finds there, and docs/security.md says what each can do. Facts of each agent's own docs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

# A file or folder name relative to the agent's working folder → what it can make the agent do.
FOLDER_FILES: dict[str, str] = {
    ".claude/settings.json": "Claude Code: hooks (commands run as you), permissions, MCP",
    ".claude/settings.local.json": "Claude Code: hooks (commands run as you), permissions",
    ".mcp.json": "Claude Code: MCP servers (commands run as you)",
    "CLAUDE.md": "Claude Code: instructions the model follows",
    ".gemini/settings.json": "Gemini CLI: tools, MCP servers (commands run as you)",
    "GEMINI.md": "Gemini CLI: instructions the model follows",
    "opencode.json": "OpenCode: permissions, MCP servers, plugins",
    ".opencode": "OpenCode: plugins and commands",
    ".codex/config.toml": "Codex: settings",
    ".qwen/settings.json": "Qwen Code: tools, MCP servers (commands run as you)",
    "AGENTS.md": "several agents: instructions the model follows",
}
# Folders never looked into: they hold no agent's working folder of a document.
_SKIPPED = {".git", "node_modules", ".agentdoc", ".stversions", ".venv"}
MOST_FOLDERS = 20_000  # a look bounded in a vault of any size


@dataclass(frozen=True)
class FolderFile:
    folder: Path  # the working folder whose agent reads it
    path: Path
    what: str  # what the file can make an agent do
    problem: str | None = None  # why an agent would not read it as meant (broken JSON)


def _problem(path: Path) -> str | None:
    if path.suffix != ".json" or not path.is_file():
        return None
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"not valid JSON ({exc})"
    return None


def folder_files(root: Path) -> list[FolderFile]:
    """The agents' own files at or below `root` (each folder a document's agent may start
    in), at most MOST_FOLDERS folders looked at."""
    found: list[FolderFile] = []
    for looked, (folder, subfolders, _files) in enumerate(os.walk(root), start=1):
        subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED)
        here = Path(folder)
        for name, what in FOLDER_FILES.items():
            path = here / name
            if path.exists():
                found.append(FolderFile(here, path, what, _problem(path)))
        if looked >= MOST_FOLDERS:
            break
    return found
