"""How real editors put a save on disk, replayed operation by operation for watcher tests.

Each strategy keeps the file's permission bits, as the editor it imitates does. `save()` picks a
strategy by name; `STRATEGIES` lists them for parametrisation.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path

DEFAULT_MODE = 0o644


def _mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return DEFAULT_MODE


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_new(path: Path, data: bytes, mode: int) -> None:
    """Create (or truncate) and write, then set the mode explicitly: umask must not change it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(path, mode)


def in_place(path: Path, data: bytes) -> None:
    """Truncate and rewrite the same inode: nano, VS Code, Vim with `backupcopy=yes`."""
    existed = path.exists()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, DEFAULT_MODE)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)
    if not existed:
        os.chmod(path, DEFAULT_MODE)


def vim_rename(path: Path, data: bytes) -> None:
    """Vim's `backupcopy=auto` save when it decides a rename is safe (`nobackup writebackup`).

    Vim first creates and deletes a file named `4913` to learn whether it may create files in
    the folder, renames the original to the backup `file~`, writes a new file, copies the old
    mode onto it, and deletes the backup once the write succeeded.
    """
    mode = _mode(path)
    probe = path.with_name("4913")
    probe.touch()
    probe.unlink()
    backup = path.with_name(path.name + "~")
    had_original = path.exists()
    if had_original:
        path.rename(backup)
    _write_new(path, data, mode)
    if had_original:
        backup.unlink()


def emacs(path: Path, data: bytes) -> None:
    """Emacs' default save (`backup-by-copying` nil) of a buffer edited in this session.

    Editing the buffer creates the lock symlink `.#file` (its target names user, host and pid);
    saving renames the original to `file~` (which Emacs keeps), writes a new file with the old
    mode, and unlocks.
    """
    mode = _mode(path)
    lock = path.with_name(".#" + path.name)
    os.symlink(f"user@host.{os.getpid()}:1700000000", lock)
    try:
        if path.exists():
            path.rename(path.with_name(path.name + "~"))
        _write_new(path, data, mode)
    finally:
        lock.unlink()


def jetbrains(path: Path, data: bytes) -> None:
    """JetBrains "safe write": temp file, original to `___jb_old___`, temp into place."""
    mode = _mode(path)
    tmp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    _write_new(tmp, data, mode)
    had_original = path.exists()
    if had_original:
        path.rename(old)
    tmp.rename(path)
    if had_original:
        old.unlink()


def temp_rename(path: Path, data: bytes) -> None:
    """Write a hidden temp beside the file, then replace it (VS Code, Sublime `atomic_save`)."""
    mode = _mode(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    _write_new(tmp, data, mode)
    os.replace(tmp, path)


def delete_recreate(path: Path, data: bytes) -> None:
    """Unlink, then create a new file with the old mode (some sync tools and scripts)."""
    mode = _mode(path)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    _write_new(path, data, mode)


STRATEGIES: dict[str, Callable[[Path, bytes], None]] = {
    "in_place": in_place,
    "vim_rename": vim_rename,
    "emacs": emacs,
    "jetbrains": jetbrains,
    "temp_rename": temp_rename,
    "delete_recreate": delete_recreate,
}


def _as_bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8") if isinstance(text, str) else text


def save(path: Path, text: str | bytes, strategy: str) -> None:
    """Save `text` to `path` the way the named editor strategy does."""
    STRATEGIES[strategy](path, _as_bytes(text))


def autosave_burst(path: Path, texts: Sequence[str | bytes], interval: float) -> None:
    """In-place saves `interval` seconds apart, like VS Code's `files.autoSave: afterDelay`.

    The gap between saves is the behaviour under test, so this helper really waits.
    """
    for index, text in enumerate(texts):
        if index:
            time.sleep(interval)
        in_place(path, _as_bytes(text))
