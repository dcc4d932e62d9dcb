"""The sync tools' table (agentdoc.synctools): each row reaches every place that reads it.

A new sync tool is one module in `agentdoc/synctools/` and one row in `ALL_TOOLS`; every test
here runs over every row, so the new tool is checked by them as it is added (with, if it makes
conflict copies, examples of their names in `CONFLICT_COPIES`).
"""

from __future__ import annotations

import ast
import re
from importlib import import_module
from pathlib import Path

import click
import pytest

import agentdoc.synctools
from agentdoc.cli.sync_commands import init_sync_command
from agentdoc.config import Settings
from agentdoc.daemon.synced.syncignore import find_tool, init_sync
from agentdoc.document import byproduct_kind, conflict_original, is_byproduct
from agentdoc.errors import AgentdocError
from agentdoc.syncmarks import SyncedFolder, synced_folder
from agentdoc.synctools import ALL_TOOLS, BYPRODUCT_DIRS, INIT_SYNC_TOOLS, TOOLS
from agentdoc.synctools.tool import SyncTool

PLAIN = Settings()
EVERY_TOOL = pytest.mark.parametrize("tool", ALL_TOOLS, ids=[t.name for t in ALL_TOOLS])

# Conflict copies each tool makes of `chat.md`, as its releases name them.
CONFLICT_COPIES: dict[str, tuple[str, ...]] = {
    "syncthing": ("chat.sync-conflict-20261125-123404-ASALHUV.md",),
    "nextcloud": (
        "chat (conflicted copy 2026-11-25 123404).md",
        "chat_conflict-20261125-123404.md",
    ),
    "dropbox": ("chat (Ann's conflicted copy 2026-11-25).md",),
    "rclone": ("chat.conflict1.md", "chat.md.conflict2", "chat.md..path1"),
}


def test_one_module_a_tool_and_one_row_a_module() -> None:
    folder = Path(agentdoc.synctools.__file__).parent
    modules = {p.stem for p in folder.glob("*.py")} - {"__init__", "tool", "table"}
    assert modules == {tool.name for tool in ALL_TOOLS}
    for tool in ALL_TOOLS:
        assert import_module(f"agentdoc.synctools.{tool.name}").TOOL is tool
    assert list(TOOLS) == [tool.name for tool in ALL_TOOLS]  # no name twice


@EVERY_TOOL
def test_its_marks_make_a_folder_synced(tmp_path: Path, tool: SyncTool) -> None:
    home = tmp_path / "home"
    roots = []
    for index, marker in enumerate(tool.markers):
        roots.append(root := tmp_path / f"marked{index}")
        (root / marker).mkdir(parents=True)
    for index, prefix in enumerate(tool.journals):
        roots.append(root := tmp_path / f"journal{index}")
        root.mkdir()
        (root / f"{prefix}3f2a9c.db").write_text("")
    if tool.home_storage:
        roots.append(home.joinpath(*tool.home_storage, "Provider-me@example.com"))
    for root in roots:
        (root / "notes").mkdir(parents=True)
        found = synced_folder(root / "notes" / "chat.md", PLAIN, home=home)
        assert found == SyncedFolder(root, tool.name)
    if tool.init_marker is not None:
        repository = tmp_path / "repository"
        (repository / tool.init_marker).mkdir(parents=True)
        (repository / "notes").mkdir()
        assert synced_folder(repository / "notes", PLAIN, home=home) is None
        assert find_tool(repository / "notes", PLAIN) == (tool.name, repository.resolve())
    assert tool.unmarked == (not roots and tool.init_marker is None)


@EVERY_TOOL
def test_what_it_leaves_beside_a_document_is_never_one(tool: SyncTool) -> None:
    assert set(tool.byproduct_dirs) <= BYPRODUCT_DIRS
    for pattern, kind in tool.others:
        name = pattern.replace("*", "chat.md")
        assert byproduct_kind(name) == kind
    copies = CONFLICT_COPIES.get(tool.name, ())
    assert bool(copies) == bool(tool.conflicts), "examples of its conflict copies, above"
    for copy in copies:
        assert conflict_original(copy) == "chat.md" and is_byproduct(copy)
    for pattern in tool.conflicts:  # each of its patterns is one some copy needs
        assert any(re.fullmatch(pattern, copy, re.IGNORECASE) for copy in copies), pattern


@EVERY_TOOL
def test_init_sync_does_what_its_row_says(tmp_path: Path, tool: SyncTool) -> None:
    folder = tmp_path / "share"
    folder.mkdir()
    if not tool.init_sync:
        assert tool.name not in INIT_SYNC_TOOLS
        with pytest.raises(AgentdocError, match="has no ignore file agentdoc knows"):
            init_sync(folder, PLAIN, tool.name)
        return
    assert tool.name in INIT_SYNC_TOOLS
    if tool.by_hand is not None:
        with pytest.raises(AgentdocError) as refused:
            init_sync(folder, PLAIN, tool.name)
        assert str(refused.value) == tool.by_hand
        return
    done = init_sync(folder, PLAIN, tool.name)
    assert any("synced = [" in step for step in done.todo) == tool.unmarked
    if tool.profile is not None:
        assert done.file is None and done.added == []
        assert all(line in done.todo[0] for line in tool.ignore_lines)
        assert tool.profile in done.todo[0]
        return
    assert tool.ignore_file is not None
    assert done.file == folder.resolve() / tool.ignore_file
    assert done.added == list(tool.ignore_lines)
    assert set(tool.ignore_lines) <= set(done.file.read_text(encoding="utf-8").splitlines())
    if tool.afterwards is not None:
        assert str(done.file) in done.todo[0]
    assert init_sync(folder, PLAIN, tool.name).added == []  # once


def test_the_command_offers_every_tool_init_sync_knows() -> None:
    option = next(p for p in init_sync_command.params if p.name == "tool")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == INIT_SYNC_TOOLS


# A tool's marks as string constants elsewhere would be a list of its own beside the table's.
# git is the version control agentdoc uses everywhere, so its words are everyone's.
ELSEWHERE = {
    # folders a look through a tree for agents' files never enters, a tool's among them
    ("agentdoc/agents/folderfiles.py", ".stversions"),
}


def test_no_module_keeps_a_list_of_its_own() -> None:
    words = {
        word
        for tool in ALL_TOOLS
        if tool.name != "git"
        for word in (
            tool.name,
            tool.ignore_file,
            *tool.markers,
            *tool.journals,
            *tool.byproduct_dirs,
            *(pattern for pattern, _kind in tool.others),
        )
        if word is not None
    }
    package = Path(agentdoc.synctools.__file__).parents[1]
    found = {
        (path.relative_to(package.parent).as_posix(), node.value)
        for path in package.rglob("*.py")
        if "synctools" not in path.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in words
    }
    assert found == ELSEWHERE
