"""Reading documents safely and writing them so the file on disk is always a whole version.

Writes go to a temp file in the same folder, are fsynced, renamed over the target, and the folder
is fsynced, so a crash leaves either the old or the new version (PRODUCT.md §7 promise 3).
Symlinked documents are written through to their target; hard-linked ones are rewritten in place
(a rename would split the link), writing the new bytes before truncating so the file is never
empty. Every write is recorded in a ledger by content hash, which is how the watcher recognises
its own writes without timing windows.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import os
import stat
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path

from agentdoc.errors import AgentdocError, DocumentGone

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
TEMP_PREFIX = ".agentdoc-tmp-"


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; a new document or sidecar should get the user's usual mode.
NEW_FILE_MODE = 0o666 & ~_current_umask()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


NAME_MAX = 255  # bytes in one file name on Linux and macOS filesystems


def fitting_name(name: str, suffix: str) -> str:
    """``name + suffix``, or, when that is too long for a file name, a shortened name that is
    still unique: the start of `name`, a hash of all of it, then `suffix`.

    State files and sidecars are named after their document; a document whose own name is
    near the limit (255 bytes) would otherwise get state files no filesystem can create.
    """
    full = name + suffix
    if len(os.fsencode(full)) <= NAME_MAX:
        return full
    tag = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    room = NAME_MAX - len(os.fsencode(tag + suffix))
    head = os.fsencode(name)[: max(room, 0)].decode("utf-8", "ignore")
    return head + tag + suffix


def _check_readable(path: Path, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise AgentdocError(f"{path}: is a folder, not a document")
    if not stat.S_ISREG(st.st_mode):
        # A FIFO would block the read forever and a device (a link to /dev/zero) never ends.
        raise AgentdocError(f"{path}: not a regular file; agentdoc only works on plain files")
    if st.st_size > MAX_DOCUMENT_BYTES:
        raise _too_large(path, st.st_size)


def _too_large(path: Path, size: int) -> AgentdocError:
    return AgentdocError(
        f"{path}: {size / 1e6:.1f} MB is larger than agentdoc handles "
        f"({MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB); the file was left untouched"
    )


def read_bytes(path: Path) -> bytes:
    try:
        st = path.stat()
        _check_readable(path, st)
        with path.open("rb") as f:
            # Read what the stat saw plus a little, never the whole limit at once: a read of
            # N bytes allocates N up front. Growth since the stat is still caught below.
            data = f.read(st.st_size + 4096)
            while len(data) <= MAX_DOCUMENT_BYTES and (more := f.read(1 << 16)):
                data += more
    except FileNotFoundError as exc:
        raise DocumentGone(f"{path}: the document no longer exists") from exc
    except IsADirectoryError as exc:
        raise AgentdocError(f"{path}: is a folder, not a document") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise AgentdocError(f"{path}: is a loop of symbolic links") from exc
        raise AgentdocError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > MAX_DOCUMENT_BYTES:
        raise _too_large(path, len(data))
    return data


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode(path: Path, data: bytes) -> str:
    if data.startswith(_UTF16_BOMS):
        raise AgentdocError(
            f"{path}: is UTF-16 text; save it as UTF-8 to use it with agentdoc "
            "(the file was left untouched)"
        )
    if b"\x00" in data:
        raise AgentdocError(f"{path}: looks like a binary file; the file was left untouched")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentdocError(
            f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "agentdoc only edits UTF-8 documents, the file was left untouched"
        ) from exc


def read_text(path: Path) -> str:
    return decode(path, read_bytes(path))


def _fsync_dir(folder: Path) -> None:
    # Not every platform/filesystem lets a directory be opened or fsynced.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_in_place(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY)
    try:
        _write_all(fd, data)
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _rename_exchange() -> Callable[[str, str], bool] | None:
    """Linux's renameat2(RENAME_EXCHANGE): swap two paths atomically, if this system has it."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return None
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    at_fdcwd, rename_exchange = -100, 2

    def exchange(a: str, b: str) -> bool:
        if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
            return True
        err = ctypes.get_errno()
        if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # not on this filesystem
            return False
        raise OSError(err, os.strerror(err), b)

    return exchange


_EXCHANGE = _rename_exchange() if sys.platform == "linux" else None


def atomic_write(path: Path, data: bytes, *, expected: bytes | None = None) -> bytes | None:
    """Replace the file's content with `data` so readers only ever see a whole version.

    With `expected` (the bytes the new content was merged from), a save that lands between
    the caller's read and this write is not lost: the file is swapped with ours atomically
    and the displaced version is checked. If it is not `expected`, it is returned, so the
    caller can merge it and write again (our version is on disk meanwhile). Returns None when
    nothing was displaced that the caller hasn't seen.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and st.st_nlink > 1:
        _write_in_place(target, data)
        return None
    folder = target.parent
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=folder)
    displaced: bytes | None = None
    try:
        _write_all(fd, data)
        os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else NEW_FILE_MODE)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        if expected is not None and st is not None and _EXCHANGE and _EXCHANGE(tmp, str(target)):
            with open(tmp, "rb") as old:
                previous = old.read()
            os.unlink(tmp)
            displaced = None if previous == expected else previous
        else:
            os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)
    return displaced


class WriteLedger:
    """Remembers the hashes of recent content we wrote, per file, across threads."""

    def __init__(self, keep: int = 64) -> None:
        self._keep = keep
        self._lock = threading.Lock()
        self._hashes: dict[Path, deque[str]] = {}

    def record(self, path: Path, data: bytes) -> None:
        key = path.absolute()
        with self._lock:
            self._hashes.setdefault(key, deque(maxlen=self._keep)).append(digest(data))

    def is_own(self, path: Path, data: bytes) -> bool:
        with self._lock:
            return digest(data) in self._hashes.get(path.absolute(), ())


def _check_writable(path: Path) -> None:
    """Refuse to replace a file its owner marked read-only (a rename would not notice)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # a new file, or one atomic_write will report on
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
        raise AgentdocError(
            f"{path}: the file is read-only; agentdoc did not change it (make it writable to "
            "get replies in it)"
        )


def _write_error(path: Path, exc: OSError) -> AgentdocError:
    target = path.resolve() if path.is_symlink() else path
    # mkstemp names its temp file in the error: then it is the folder that refused the write.
    temp = Path(str(exc.filename or "")).name.startswith(TEMP_PREFIX)
    if isinstance(exc, PermissionError) and (temp or not os.access(target.parent, os.W_OK)):
        return AgentdocError(
            f"{path}: cannot write: the folder {target.parent} is not writable (agentdoc writes "
            "a temporary file beside the document and renames it over the document)"
        )
    return AgentdocError(f"{path}: cannot write: {exc.strerror or exc}")


def write_text(
    path: Path, text: str, ledger: WriteLedger | None = None, *, expected: bytes | None = None
) -> bytes | None:
    """Write a document or sidecar; failures become user-facing errors that say why.

    See `atomic_write` for `expected` and the return value.
    """
    return write_bytes(path, text.encode("utf-8"), ledger, expected=expected)


def write_bytes(
    path: Path, data: bytes, ledger: WriteLedger | None = None, *, expected: bytes | None = None
) -> bytes | None:
    """`write_text` of text the caller has already encoded (UTF-8), so a long document
    written on every streamed flush is not encoded twice."""
    _check_writable(path)
    if ledger is not None:
        ledger.record(path, data)
    try:
        return atomic_write(path, data, expected=expected)
    except OSError as exc:
        raise _write_error(path, exc) from exc
