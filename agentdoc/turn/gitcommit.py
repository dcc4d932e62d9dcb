"""Git per turn (opt-in): commit the document, and only the document, after a turn.

`git: commit` under ``agentdoc:`` or ``git = "commit"`` in the config turns it on (``git: off``
in a document turns the config's default off for it). The commit takes the document (and its
thinking sidecar when git tracks that) by pathspec with ``--only``, so whatever else the person
has staged or changed stays out of it and stays staged. It never amends and never pushes. While
git holds ``index.lock``, outside a repository, or when git fails (no identity, a hook says no),
the commit is skipped with a line in the log: the turn itself is done either way.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.document import Document, sidecar_path

log = logging.getLogger(__name__)

GIT_TIMEOUT = 60.0  # seconds; a hook or a signing prompt that hangs must not hold the turn
_POINTERS = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE")


def enabled(doc: Document, settings: Settings) -> bool:
    return (doc.meta.git or settings.git) in ("commit", "sync")


def run_git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # Variables a calling git hook may have set would point us at another repository or index.
    env = {k: v for k, v in os.environ.items() if k not in _POINTERS}
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT,
        check=False,
    )


def _tracked(path: Path, cwd: Path) -> bool:
    return run_git(["ls-files", "--error-unmatch", "--", str(path)], cwd).returncode == 0


def _skip(path: Path, why: str) -> bool:
    log.warning("%s: no git commit: %s", path, why)
    return False


def commit(path: Path, message: str) -> bool:
    """Commit ``path`` (and its tracked sidecar) alone with ``message``; False if skipped."""
    folder = path.parent.absolute()
    try:
        if run_git(["rev-parse", "--is-inside-work-tree"], folder).stdout.strip() != "true":
            return _skip(path, "it is not inside a git work tree")
        lock = run_git(["rev-parse", "--git-path", "index.lock"], folder).stdout.strip()
        if lock and (folder / lock).exists():
            return _skip(path, "git is busy (index.lock exists)")
        paths = [str(path.absolute())]
        sidecar = sidecar_path(path).absolute()
        if sidecar.exists() and _tracked(sidecar, folder):
            paths.append(str(sidecar))
        for step in (["add", "--", *paths], ["commit", "--only", "-m", message, "--", *paths]):
            done = run_git(step, folder)
            if done.returncode != 0:
                said = (done.stderr or done.stdout).strip().splitlines()
                return _skip(path, f"git {step[0]} failed: {said[-1] if said else done.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        return _skip(path, f"cannot run git: {exc}")
    log.info("%s: committed (%s)", path, message)
    return True


def turn_message(path: Path, turn: int) -> str:
    return f"{path.name}: turn {turn} (agentdoc)"


def undo_message(path: Path, turn: int) -> str:
    return f"{path.name}: undo turn {turn} (agentdoc)"


def commit_undo(path: Path, doc: Document, settings: Settings, first: int) -> bool:
    """Commit an undo back to turn ``first`` when git per turn is on; whether it committed."""
    return enabled(doc, settings) and commit(path, undo_message(path, first))
