"""The shipped editor recipes load in the real editors that are available, and say the right
commands. (The Neovim recipe is also exercised end to end in test_editor_neovim.py.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import PACKAGE

RECIPES = PACKAGE / "editors"


def run_vim(*commands: str) -> int:
    argv = ["vim", "-Nu", "NONE", "-i", "NONE", "-Es"]
    for command in commands:
        argv += ["-c", command]
    return subprocess.run([*argv, "-c", "qa!"], timeout=30, check=False).returncode


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
def test_vim_recipe_loads_and_maps_the_commands(tmp_path: Path) -> None:
    recipe = RECIPES / "agentdoc.vim"
    # The keys are mapped in session documents only (see test_editor_vim_emacs.py for more).
    doc = tmp_path / "chat.md"
    doc.write_text("---\nagentdoc: {}\n---\n\n## User\n\n")
    check = (
        "if maparg('<Leader>ar', 'n') !~# 'Run' || maparg('<Leader>ac', 'n') !~# 'Cancel'"
        " || !&autoread | cquit | endif"
    )
    assert run_vim(f"source {recipe}", f"edit {doc}", check) == 0
    broken = tmp_path / "broken.vim"
    broken.write_text(recipe.read_text().replace("endfunction", "", 1))
    assert run_vim(f"source {broken}") != 0  # the check above can fail


@pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")
def test_emacs_recipe_loads() -> None:
    result = subprocess.run(
        ["emacs", "--batch", "-l", str(RECIPES / "agentdoc.el"), "--eval", "(agentdoc-setup)"],
        timeout=60,
        check=False,
    )
    assert result.returncode == 0


def test_vscode_tasks_and_sublime_build_call_agentdoc() -> None:
    tasks = json.loads((RECIPES / "vscode-tasks.json").read_text())
    commands = {t["label"]: [t["command"], *t["args"]] for t in tasks["tasks"]}
    assert commands["agentdoc: run"] == ["agentdoc", "run", "${file}"]
    assert commands["agentdoc: cancel"] == ["agentdoc", "cancel", "${file}"]
    build = json.loads((RECIPES / "agentdoc.sublime-build").read_text())
    assert build["cmd"] == ["agentdoc", "run", "$file"]


def test_systemd_unit_runs_the_daemon_in_the_foreground() -> None:
    unit = (RECIPES / "agentdoc-watch.service").read_text()
    exec_line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert " watch " in exec_line and "&" not in exec_line
