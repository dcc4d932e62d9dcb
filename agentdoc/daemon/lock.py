"""One daemon per tree: a lock file in each watched folder's ``.agentdoc/`` (out of the tree
in a synced folder, `agentdoc.localstate`).

The lock is an flock, so it disappears with the process even after a crash or SIGKILL; the file
also names the pid and roots, which `agentdoc stop` and the refusal message use. A daemon
watching a folder also covers everything below it, so a new daemon checks the folders above its
roots as well.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from agentdoc.errors import AgentdocError
from agentdoc.localstate import STATE, state_folder, state_folders
from agentdoc.records import make_state_dir

LOCK_NAME = "daemon.lock"


@dataclass(frozen=True)
class Holder:
    pid: int
    roots: list[str]
    lock_file: Path
    folder: Path  # the watched folder whose lock this is
    polling: str | None = None  # why the daemon polls though not asked to, if it does
    settings: str | None = None  # a saved config it could not apply, or that needs a restart


def _folder(root: Path) -> Path:
    root = root.absolute()
    return root if root.is_dir() else root.parent


def _lock_file(folder: Path) -> Path:
    return state_folder(folder) / LOCK_NAME


def _lock_files(folder: Path) -> list[Path]:
    """Where a daemon watching `folder` holds its lock: where its state lives now, and in the
    tree, where an agentdoc from before state moved out of synced folders holds it."""
    return list(dict.fromkeys([_lock_file(folder), folder / STATE / LOCK_NAME]))


def _holder(lock_file: Path, folder: Path) -> Holder | None:
    """Who holds this lock file, or None if nobody does (probing without keeping it)."""
    try:
        with lock_file.open("r+") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                info = json.loads(f.read() or "{}")
                polling, settings = info.get("polling"), info.get("settings")
                return Holder(
                    int(info.get("pid", 0)),
                    list(info.get("roots", [])),
                    lock_file,
                    folder,
                    polling if isinstance(polling, str) else None,
                    settings if isinstance(settings, str) else None,
                )
            fcntl.flock(f, fcntl.LOCK_UN)
    except (OSError, ValueError):
        return None
    return None


def find_daemon(path: Path) -> Holder | None:
    """The daemon whose watched tree contains `path`, if one runs."""
    folder = _folder(path)
    for candidate in (folder, *folder.parents):
        for lock_file in _lock_files(candidate):
            if lock_file.exists() and (holder := _holder(lock_file, candidate)) is not None:
                return holder
    return None


def _held_below(folder: Path) -> Iterator[Holder]:
    for below, state in state_folders(folder):
        lock_file = state / LOCK_NAME
        if lock_file.exists() and (holder := _holder(lock_file, below)) is not None:
            yield holder


class TreeLock:
    """Held for the daemon's lifetime; refuses to start over another daemon's tree."""

    def __init__(self, roots: Sequence[Path]) -> None:
        folders = {_folder(r) for r in roots}
        # A folder inside another watched folder is already covered (and locking it would make
        # us find our own lock above it).
        self.folders = sorted(f for f in folders if not any(o in f.parents for o in folders))
        self._files: list[IO[str]] = []
        self._told: dict[str, str] = {}  # what the lock files say besides pid and roots

    def acquire(self) -> None:
        for folder in self.folders:
            self._take(folder)

    def _take(self, folder: Path) -> None:
        lock_file = _lock_file(folder)
        try:
            make_state_dir(lock_file.parent)
            f = lock_file.open("a+")
        except OSError as exc:
            self.release()
            raise AgentdocError(f"cannot create {lock_file}: {exc.strerror or exc}") from exc
        # One wait for both ways a dead daemon's lock can linger (see `LOCK_GRACE`); a live
        # daemon above, at or below this folder is refused at once.
        deadline = time.monotonic() + LOCK_GRACE
        while True:
            other = find_daemon(folder) or next(_held_below(folder), None)
            if other is None and _flocked(f):
                break
            if (other is not None and _alive(other.pid)) or time.monotonic() >= deadline:
                f.close()
                self.release()
                raise _refusal(other, folder)
            time.sleep(0.05)
        self._files.append(f)
        self._describe(f, self._told)

    def _describe(self, f: IO[str], extra: dict[str, str]) -> None:
        f.seek(0)
        f.truncate()
        info = {"pid": os.getpid(), "roots": [str(x) for x in self.folders], **extra}
        f.write(json.dumps(info))
        f.flush()

    def tell_polling(self, reason: str) -> None:
        """Say in the lock files (which `agentdoc status` reads) why the daemon polls."""
        self.tell("polling", reason)

    def tell(self, key: str, value: str | None) -> None:
        """Say `value` under `key` in the lock files (None: no longer), keeping what else
        they say."""
        if value is None:
            self._told.pop(key, None)
        else:
            self._told[key] = value
        for f in self._files:
            with contextlib.suppress(OSError):
                self._describe(f, self._told)

    def release(self) -> None:
        for f in self._files:
            with contextlib.suppress(OSError):
                fcntl.flock(f, fcntl.LOCK_UN)
            f.close()
        self._files.clear()


# A daemon restarted right after a crash may find the lock still held for a moment: a child
# the dead daemon was forking when it was killed keeps the lock's file open until it too has
# died. Wait this long for such a lock before refusing to start.
LOCK_GRACE = 3.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0


def _flocked(f: IO[str]) -> bool:
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _refusal(other: Holder | None, folder: Path) -> AgentdocError:
    if other is None:  # taken between our look and our flock
        return AgentdocError(f"another agentdoc watch already watches {folder}")
    where = other.folder
    if not _alive(other.pid):
        return AgentdocError(
            f"the agentdoc watch (pid {other.pid}) on {where} has ended, but a process it "
            f"started still holds {other.lock_file}; stop that process and try again"
        )
    return AgentdocError(
        f"another agentdoc watch (pid {other.pid}) already watches "
        f"{', '.join(other.roots) or where}; stop it with `agentdoc stop {where}`"
    )


def stop_daemon(path: Path, wait: float) -> int:
    """Ask the daemon watching `path` to stop (SIGTERM) and wait until it has; its pid."""
    holder = find_daemon(path)
    if holder is None:
        raise AgentdocError(f"no agentdoc watch is running for {path}")
    with contextlib.suppress(ProcessLookupError):
        os.kill(holder.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if find_daemon(holder.folder) is None:
            return holder.pid
        time.sleep(0.05)
    raise AgentdocError(f"agentdoc watch (pid {holder.pid}) has not stopped after {wait:.0f} s")
