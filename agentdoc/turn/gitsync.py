"""git as the sync (`git: sync`): pull the remote in before a turn, commit and push after it.

A phone (Working Copy, obsidian-git) pushes a prompt; the daemon fetches, merges the remote's
commits, and where git cannot merge the document itself agentdoc's own three-way merge writes
it (every character of both sides, never a conflict marker). After the turn the document is
committed and pushed; a push the remote rejects is retried after integrating again. Never a
force-push, never a rebase of what others have. One repository is integrated by one thread at a
time; a conflict in another file is left to the person (the merge is aborted and logged).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from agentdoc.config import Settings
from agentdoc.document import Document, merge_text
from agentdoc.turn.gitcommit import commit, run_git

log = logging.getLogger(__name__)

PUSH_TRIES = 3
_locks: dict[Path, threading.Lock] = {}
_guard = threading.Lock()


def sync_on(doc: Document, settings: Settings) -> bool:
    return (doc.meta.git or settings.git) == "sync"


def toplevel(path: Path) -> Path | None:
    done = run_git(["rev-parse", "--show-toplevel"], path.parent.absolute())
    return Path(done.stdout.strip()) if done.returncode == 0 else None


def repo_lock(top: Path) -> threading.Lock:
    with _guard:
        return _locks.setdefault(top, threading.Lock())


def behind(top: Path) -> int:
    """Fetch, then count the upstream's commits this branch lacks (0 without an upstream)."""
    if (fetched := run_git(["fetch", "--quiet"], top)).returncode != 0:
        log.info("%s: git fetch failed: %s", top, fetched.stderr.strip()[-200:])
        return 0
    done = run_git(["rev-list", "--count", "HEAD..@{upstream}"], top)
    return int(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else 0


def _show(top: Path, rev: str, rel: str) -> str:
    done = run_git(["show", f"{rev}:{rel}"], top)
    return done.stdout if done.returncode == 0 else ""


def _conflicts(top: Path) -> list[str]:
    done = run_git(["diff", "--name-only", "--diff-filter=U"], top)
    return [line for line in done.stdout.splitlines() if line]


def integrate(path: Path, *, fetched: bool = False) -> str | None:
    """Merge the upstream into `path`'s repository; None when done (or nothing to do), else
    why not. The document's own edits are committed first so the merge can take them."""
    top = toplevel(path)
    if top is None:
        return "it is not inside a git work tree"
    with repo_lock(top):
        return _integrate(path, top, fetched)


def _integrate(path: Path, top: Path, fetched: bool) -> str | None:
    if not fetched and behind(top) == 0:
        return None
    if run_git(["rev-parse", "--verify", "--quiet", "@{upstream}"], top).returncode != 0:
        return "its branch has no upstream to pull from"
    rel = path.absolute().relative_to(top).as_posix()
    if run_git(["diff", "--quiet", "HEAD", "--", rel], top).returncode != 0:
        commit(path, f"{path.name}: edits (agentdoc)")
    base_rev = run_git(["merge-base", "HEAD", "@{upstream}"], top).stdout.strip()
    base, ours = _show(top, base_rev, rel), _show(top, "HEAD", rel)
    theirs = _show(top, "@{upstream}", rel)
    merged = run_git(["merge", "--no-ff", "--no-edit", "--no-commit", "@{upstream}"], top)
    conflicts = _conflicts(top)
    if merged.returncode != 0 and not conflicts:
        run_git(["merge", "--abort"], top)
        said = (merged.stderr or merged.stdout).strip().splitlines()
        return f"git merge failed: {said[-1] if said else merged.returncode}"
    if set(conflicts) - {rel}:
        run_git(["merge", "--abort"], top)
        return f"other files conflict with the remote: {', '.join(conflicts)}"
    if rel in conflicts:
        # git's conflict markers never reach the document: agentdoc's merge keeps both sides.
        path.write_text(merge_text(base, ours, theirs), encoding="utf-8")
        run_git(["add", "--", rel], top)
    done = run_git(["commit", "--no-edit", "-m", f"{path.name}: merge the remote (agentdoc)"], top)
    if done.returncode != 0:
        run_git(["merge", "--abort"], top)
        return f"git commit of the merge failed: {done.stderr.strip()[-200:]}"
    log.info("%s: merged the remote's commits", path)
    return None


def push(path: Path, message: str, wait: Callable[[], None] = lambda: None) -> str | None:
    """Commit the document and push; a rejected push is retried after integrating. None when
    pushed, else why not (logged by the caller)."""
    top = toplevel(path)
    if top is None:
        return "it is not inside a git work tree"
    with repo_lock(top):
        commit(path, message)
        for _ in range(PUSH_TRIES):
            done = run_git(["push", "--quiet"], top)
            if done.returncode == 0:
                return None
            said = (done.stderr or done.stdout).strip()
            if "rejected" not in said and "fetch first" not in said:
                return f"git push failed: {said.splitlines()[-1] if said else done.returncode}"
            if (why := _integrate(path, top, fetched=False)) is not None:
                return f"the remote moved on and merging it failed: {why}"
            wait()
    return f"git push was rejected {PUSH_TRIES} times (the remote keeps moving)"
