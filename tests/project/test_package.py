"""The package as the index delivers it: build the sdist and wheel, install the wheel into a
fresh virtual environment outside the repository, and use the tool from there.

This is what `pipx install agentdoc` or `uv tool install agentdoc` gives a user: the commands,
the editor recipes as package data, and the demo driving the real Claude Code CLI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.claude_cli import require_claude
from tests.support.paths import REPO_ROOT

# Building both distributions and installing the wheel into a fresh environment took 240 s
# on a loaded 2-core machine; the suite's 300 s guard is for a test that hangs.
pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{argv}\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the sdist/wheel folder, the fresh venv's bin folder)."""
    work = tmp_path_factory.mktemp("package")
    dist = work / "dist"
    # The wheel is built from the sdist, so a file missing from the sdist fails here too.
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO_ROOT)], cwd=work)
    venv = work / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=work)
    (wheel,) = dist.glob("agentdoc-*.whl")
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], cwd=work)
    return dist, venv / "bin"


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No trace of the development environment: no PYTHONPATH, a scratch HOME."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}
    env.update(extra)
    return env


def test_the_distributions_carry_the_license_changelog_and_recipes(
    installed: tuple[Path, Path],
) -> None:
    dist, _bin = installed
    (wheel,) = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = archive.read("agentdoc-0.1.0.dist-info/METADATA").decode()
    assert "agentdoc-0.1.0.dist-info/licenses/LICENSE" in names
    for recipe in ("agentdoc.vim", "agentdoc.el", "nvim/lua/agentdoc/init.lua"):
        assert f"agentdoc/editors/{recipe}" in names
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Operating System :: POSIX :: Linux" in metadata
    assert "Author: agentdoc contributors" in metadata
    assert "Requires-Dist: rich" in metadata
    (sdist,) = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = archive.getnames()
    assert {"agentdoc-0.1.0/LICENSE", "agentdoc-0.1.0/CHANGELOG.md"} <= set(members)


def test_the_installed_tool_works_outside_the_repository(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _dist, bin_dir = installed
    agentdoc = str(bin_dir / "agentdoc")
    claude = str(require_claude())
    env = clean_env(tmp_path / "home", AGENTDOC_CLAUDE=claude)
    (tmp_path / "home").mkdir()

    assert run([agentdoc, "--version"], tmp_path, env).strip() == "agentdoc, version 0.1.0"

    # doctor: no login in the scratch HOME, so it exits 1; the report itself is what matters.
    done = subprocess.run(
        [agentdoc, "doctor", "--json", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["claude CLI"]["outcome"] == "ok" and claude in checks["claude CLI"]["detail"]
    assert checks["claude runs"]["outcome"] == "ok"
    assert checks["authentication"]["outcome"] == "fail" and done.returncode == 1

    vim = Path(run([agentdoc, "editor", "vim"], tmp_path, env).strip())
    assert vim.is_file() and vim.is_relative_to(bin_dir.parent)

    out = run([agentdoc, "demo", "--dir", str(tmp_path / "demo"), "--delay", "0"], tmp_path, env)
    assert "----- " in out
    assert "## Assistant" in (tmp_path / "demo" / "hello.md").read_text()
