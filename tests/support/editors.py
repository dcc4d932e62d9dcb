"""A real Vim run on a document, and a conversation imported from elsewhere."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

HISTORY = """
# Imported

## User

What is the capital of France?

## Assistant

Paris.

## User

"""


def vim(*commands: str) -> list[str]:
    binary = shutil.which("vim") or shutil.which("nvim")
    if binary is None:
        pytest.skip("neither vim nor nvim is installed (`make editors`)")
    argv = [binary, "-Nu", "NONE", "-i", "NONE", "-n", "-Es"]
    for command in commands:
        argv += ["-c", command]
    return [*argv, "-c", "qa!"]


def editor(argv: list[str], home: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "TERM": "dumb"}
    done = subprocess.run(
        argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


def open_in_editor(doc: Path, home: Path) -> None:
    editor(vim(f"edit {doc}"), home)
