"""A bare git repository and two clones of it (the desktop's, the phone's) for `git: sync`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentdoc.document import parser as document

DOC = """---
agentdoc: {git: sync}
---

# From the phone

## User

"""
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def clone(remote: Path, where: Path) -> Path:
    git(remote.parent, "clone", "--quiet", str(remote), str(where))
    git(where, "config", "user.name", "phone" if where.name == "phone" else "desk")
    git(where, "config", "user.email", "t@example.org")
    return where


def roles_in(path: Path) -> list[str]:
    return [t.role for t in document.parse(path.read_text(encoding="utf-8")).turns]


def pulled(phone: Path) -> str:
    git(phone, "pull", "--quiet", "--no-rebase", "--no-edit")
    return (phone / "chat.md").read_text(encoding="utf-8")


def make_repos(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare remote, the desktop's clone holding the document, and the phone's clone."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    desk = clone(remote, tmp_path / "desk")
    git(desk, "checkout", "--quiet", "-b", "main")
    (desk / "chat.md").write_text(DOC)
    (desk / ".gitignore").write_text(".agentdoc/\n")
    git(desk, "add", ".")
    git(desk, "commit", "--quiet", "-m", "start")
    git(desk, "push", "--quiet", "-u", "origin", "main")
    return remote, desk, clone(remote, tmp_path / "phone")
