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
import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from agentdoc.document.ledger import WriteLedger
from agentdoc.document.ownopens import note_own_open
from agentdoc.errors import AgentdocError, DocumentGone, ReadOnlyDocument

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024
TEMP_PREFIX = ".agentdoc-tmp-"


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp creates 0600 files; a new document or sidecar should get the user's usual mode.
NEW_FILE_MODE = 0o666 & ~_current_umask()


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
        f"{path}: {size / (1024 * 1024):.1f} MiB is larger than agentdoc handles "
        f"({MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB); the file was left untouched"
    )


def read_bytes(path: Path) -> bytes:
    try:
        st = path.stat()
        _check_readable(path, st)
        note_own_open(path)
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


# A document as bytes, or as pieces written one after the other (a spliced write: the long
# unchanged parts are views of the version read, never copied into a new whole).
Content = bytes | Sequence[bytes | memoryview]


def _pieces(data: Content) -> Sequence[bytes | memoryview]:
    return (data,) if isinstance(data, bytes) else data


def _write_in_place(target: Path, data: Content) -> None:
    fd = os.open(target, os.O_WRONLY)
    try:
        _write_all(fd, data)
        os.ftruncate(fd, sum(len(piece) for piece in _pieces(data)))
        os.fsync(fd)
    finally:
        os.close(fd)


IOV_MAX = 1024  # pieces one writev takes (Linux's and POSIX's usual limit)


def _write_all(fd: int, data: Content) -> None:
    """Write every piece, in as few calls as the kernel allows: each write of a streamed
    reply's temp file is an event for the folder's watcher, so one call, not one per piece."""
    views = [memoryview(piece) for piece in _pieces(data) if len(piece)]
    while views:
        written = os.writev(fd, views[:IOV_MAX])
        while written:  # what a short write left: the rest of one piece and those after it
            if written < len(views[0]):
                views[0], written = views[0][written:], 0
            else:
                written -= len(views.pop(0))


COMPARE_CHUNK = 1 << 16


def _displaced(tmp: str, expected: bytes) -> bytes | None:
    """The content a swap moved to `tmp`, unless it is `expected`: compared chunk by chunk, so
    the usual answer (nothing landed meanwhile) allocates no copy of a long document."""
    with open(tmp, "rb") as old:
        if os.fstat(old.fileno()).st_size == len(expected):
            at = 0
            while chunk := old.read(COMPARE_CHUNK):
                if not expected.startswith(chunk, at):
                    break
                at += len(chunk)
            else:
                if at == len(expected):
                    return None
        old.seek(0)
        return old.read()


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


# Who wants to hear of each file this process writes (the web page's live view of a document
# and its status): told on the writing thread after the rename, so a callback must only hand
# the path on. Empty unless `agentdoc watch --serve` runs; a write then costs one call more.
_listeners: list[Callable[[Path], None]] = []


def on_written(listener: Callable[[Path], None]) -> Callable[[], None]:
    """Tell `listener` the path of every whole write from now on; returns its removal."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


def _tell(path: Path) -> None:
    for listener in _listeners:
        listener(path)


def atomic_write(
    path: Path,
    data: Content,
    *,
    expected: bytes | None = None,
    stamped: Callable[[tuple[int, int, int]], None] | None = None,
    durable: bool = True,
) -> bytes | None:
    """Replace the file's content with `data` so readers only ever see a whole version.

    With `expected` (the bytes the new content was merged from), a save that lands between
    the caller's read and this write is not lost: the file is swapped with ours atomically
    and the displaced version is checked. If it is not `expected`, it is returned, so the
    caller can merge it and write again (our version is on disk meanwhile). Returns None when
    nothing was displaced that the caller hasn't seen. `stamped` gets the written file's
    (mtime_ns, size, inode), which the rename keeps.

    The new file is synced before it is renamed into place, always: whatever a machine that
    stops keeps is a whole version. `durable=False` leaves out the sync of the folder after the
    rename, for a version that a later write replaces within a second (a streamed reply): a
    machine that stops may then forget the rename and keep the version before it, whole.
    """
    target = path.resolve() if path.is_symlink() else path
    try:
        st: os.stat_result | None = target.stat()
    except FileNotFoundError:
        st = None
    if st is not None and st.st_nlink > 1:
        _write_in_place(target, data)
        _tell(path)
        return None
    folder = target.parent
    mode = stat.S_IMODE(st.st_mode) if st is not None else NEW_FILE_MODE
    fd, tmp = _temp_file(folder, mode)
    displaced: bytes | None = None
    try:
        _write_all(fd, data)
        os.fsync(fd)
        if stamped is not None:
            done = os.fstat(fd)
            stamped((done.st_mtime_ns, done.st_size, done.st_ino))
        os.close(fd)
        fd = -1
        if expected is not None and st is not None and _EXCHANGE and _EXCHANGE(tmp, str(target)):
            displaced = _displaced(tmp, expected)
            os.unlink(tmp)
        else:
            os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _fsync_dir(folder)
    _tell(path)
    return displaced


def _temp_file(folder: Path, mode: int) -> tuple[int, str]:
    """A new temporary file in `folder` with `mode`, open for writing: created with it, so the
    usual case needs no chmod (each is one more event for the watcher of the folder)."""
    for _ in range(100):
        tmp = os.path.join(folder, TEMP_PREFIX + secrets.token_hex(5))
        try:
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        try:
            if stat.S_IMODE(os.fstat(fd).st_mode) != mode:  # the umask took bits away
                os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return fd, tmp
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(folder))


def check_writable(path: Path) -> None:
    """Refuse to replace a file its owner marked read-only (a rename would not notice)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # a new file, or one atomic_write will report on
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(path, os.W_OK):
        raise ReadOnlyDocument(
            f"{path}: the file is read-only; agentdoc did not change it (make it writable to "
            "get replies in it)"
        )


def check_replaceable(path: Path) -> None:
    """`check_writable`, and that the folder takes the temporary file every write renames over
    the document: asked of the folder itself by making one, as its mode cannot tell (root
    writes anyway; a read-only mount, an ACL or a sandbox refuses whatever the mode says)."""
    check_writable(path)
    target = path.resolve() if path.is_symlink() else path
    with contextlib.suppress(OSError):
        if target.stat().st_nlink > 1:
            return  # a hard-linked file is written in place: the folder is not asked
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=target.parent)
    except OSError as exc:
        if isinstance(exc, PermissionError) or exc.errno == errno.EROFS:
            raise _write_error(path, exc) from exc
        return  # anything else (the folder gone, say) is the write's to report as it happens
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


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
    path: Path,
    data: Content,
    ledger: WriteLedger | None = None,
    *,
    expected: bytes | None = None,
    hashed: str | None = None,
    stamped: Callable[[tuple[int, int, int]], None] | None = None,
    durable: bool = True,
) -> bytes | None:
    """`write_text` of text the caller has already encoded (UTF-8), so a long document
    written on every streamed flush is not encoded twice; `hashed` is its `digest`, if the
    caller knows it more cheaply (`PrefixDigest`). `stamped` is told the written file's
    (mtime_ns, size, inode), as the ledger is; see `atomic_write` for `durable`."""
    check_writable(path)
    if ledger is not None:
        whole = data if isinstance(data, bytes) else b""
        if hashed is None and not isinstance(data, bytes):
            raise ValueError("a document written in pieces needs its digest")
        ledger.record(path, whole, hashed)

    def tell(stamp: tuple[int, int, int]) -> None:
        if ledger is not None:
            ledger.record_stamp(path, stamp)
        if stamped is not None:
            stamped(stamp)

    try:
        wanted = ledger is not None or stamped is not None  # else spare the written file's stat
        return atomic_write(
            path, data, expected=expected, stamped=tell if wanted else None, durable=durable
        )
    except OSError as exc:
        raise _write_error(path, exc) from exc
