"""When a changed file is not the user asking: git rewrites, syncs and other bulk changes.

`git checkout` of an older commit, `git stash`, `git reset`, `git pull` or a sync tool rewrite
session documents to versions whose prompts were answered long ago, or that carry someone
else's pending prompt. The rule (docs/failures.md, "What the machine does"): **a save sends a
prompt when it kept the conversation the daemon last saw and at most added a `## User` block
to it, and git did not write it**. A change that replaced the conversation in bulk (turns gone,
more than one new turn, a second prompt below an unanswered one, a different session id) or a
version git checked out is treated like a prompt found pending at start-up: logged, not sent.
A prompt still pending after a failed turn and saved again is still sent (PRODUCT.md §7,
promise 8). While git holds its index lock the tree is mid-rewrite, so the daemon waits.
"""

from __future__ import annotations

import contextlib
import hashlib
import subprocess
from pathlib import Path


def git_dir(path: Path) -> Path | None:
    """The git directory of the repository `path` is in, if any (worktrees included)."""
    for folder in [path.parent, *path.parent.parents]:
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                line = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if line.startswith("gitdir:"):
                return (folder / line.removeprefix("gitdir:").strip()).resolve()
            return None
    return None


GIT_WINDOW = 1.0  # seconds: a file written this close to a recorded git move is git's doing


# What git touches when it moves the tree: HEAD's reflog (checkout, switch, reset, pull, merge,
# rebase), the stash's reflog (stash, stash pop), ORIG_HEAD (reset, merge, pull). Not the index:
# `git status`, which editors run on every save, rewrites the index too.
_MOVES = ("logs/HEAD", "logs/refs/stash", "ORIG_HEAD", "HEAD")


def written_by_git(path: Path, data: bytes) -> bool:
    """True if a git operation that moves the tree wrote `data`, this version of `path`.

    git writes the files it checks out and records the move within milliseconds, and leaves
    each file as HEAD has it; a person's save records nothing in git and (having just typed a
    prompt) differs from HEAD. The index lock (:func:`git_busy`) is gone by the time a change
    has settled, so these traces are what is left to tell them apart.
    """
    found = git_dir(path)
    if found is None or not _moved_recently(found, path):
        return False
    worktree = _worktree(path)
    if worktree is None:
        return False
    try:
        rel = path.resolve().relative_to(worktree.resolve()).as_posix()
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"HEAD:{rel}"],
            cwd=worktree,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return False
    return done.returncode == 0 and done.stdout.strip() in _blob_ids(data)


def _moved_recently(found: Path, path: Path) -> bool:
    try:
        written = path.stat().st_mtime
    except OSError:
        return False
    for name in _MOVES:
        with contextlib.suppress(OSError):
            if abs((found / name).stat().st_mtime - written) <= GIT_WINDOW:
                return True
    return False


def _blob_ids(data: bytes) -> set[str]:
    """The object id git gives these bytes as a file, in sha1 and in sha256 repositories."""
    header = b"blob %d\0" % len(data)
    return {hashlib.sha1(header + data).hexdigest(), hashlib.sha256(header + data).hexdigest()}


def _worktree(path: Path) -> Path | None:
    for folder in [path.parent, *path.parent.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def git_busy(path: Path) -> bool:
    """True while git rewrites the working tree `path` is in (it holds `index.lock`)."""
    found = git_dir(path)
    return found is not None and (found / "index.lock").exists()
