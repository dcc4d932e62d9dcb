"""An index of the markdown files under the watched folders, cheap to check again.

The safety rescan behind the observer must not cost in proportion to the notes a user keeps
next to their conversations. A folder's mtime changes whenever a name in it is created,
removed or renamed, so the index remembers every folder's mtime and re-lists only folders
whose mtime moved. What a folder's mtime cannot show is a file rewritten in place; those are
looked at only for the few files the consumer asks to follow closely (session documents, and
files that were saved while the daemon ran). Everything else rewritten in place is left to the
observer's events, and to a full walk after the kernel reported that it dropped events.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.document import conflict_original, is_byproduct, note_own_open
from agentdoc.synctools import BYPRODUCT_DIRS

log = logging.getLogger(__name__)

Stamp = tuple[int, int, int]  # (mtime_ns, size, inode)

# Editor artefacts and our own temp files, matched against the file name. Most also fail the
# markdown-suffix test; they are listed so the intent survives a suffix change, and because some
# (the Emacs lock `.#doc.md`, the thinking sidecar) do end in `.md`.
IGNORED: tuple[str, ...] = (
    "*.swp",  # Vim swap files (.doc.md.swp, then .swo, .swn, ...)
    "*.swx",
    "*.sw[a-p]",
    "4913",  # Vim's probe that it may create files in the folder
    "*~",  # Vim/Emacs backups
    ".#*",  # Emacs lock symlink
    "#*#",  # Emacs autosave
    "*___jb_tmp___",  # JetBrains safe write
    "*___jb_old___",
    ".subl*.tmp",  # Sublime Text atomic_save
    ".*.tmp",  # VS Code-style temp-and-rename saves
    ".*.tmp[0-9]*",
    "*.tmp",
    ".agentdoc-tmp-*",  # our own atomic writes (agentdoc.document.fileio.TEMP_PREFIX)
    "*.thinking.md",  # thinking sidecars are never session documents
)
# One pattern for them all: every name the watch meets is tried against it.
_IGNORED = re.compile("|".join(f"(?:{fnmatch.translate(pattern)})" for pattern in IGNORED))
# A sync tool's own folders (old versions, caches) hold copies, never documents.
IGNORED_DIRS = frozenset({".agentdoc", ".git", ".hg", ".svn"}) | BYPRODUCT_DIRS
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
# A folder listed within this long of its last change may still change within the same mtime
# tick (coarse filesystem clocks), so its recorded mtime is not trusted and it is listed again.
RACY_NS = 2_000_000_000
UNTRUSTED = -1


@functools.lru_cache(maxsize=16384)
def wanted_name(name: str) -> bool:
    """True for a file name that may be a session document (the folder is checked apart).
    Kept per name: every event asks, and a vault's start-up brings two for each note it reads."""
    if os.path.splitext(name)[1].lower() not in MARKDOWN_SUFFIXES:
        return False
    if _IGNORED.match(name):
        return False
    # A sync tool's conflict copy keeps the document's session id: read as a document it
    # would answer the same conversation a second time, from a second file.
    return not is_byproduct(name)


def stamp_of(path: str | Path) -> Stamp | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _log_error(exc: OSError) -> None:
    # Debug, not warning: the rescan looks every few seconds and would repeat it forever.
    log.debug("cannot list %s: %s", exc.filename, exc.strerror or exc)


@dataclass
class Folder:
    mtime: int
    files: dict[str, Stamp] = field(default_factory=dict)  # markdown file name -> stamp
    subdirs: set[str] = field(default_factory=set)  # full paths of indexed subfolders
    # A sync tool's conflict copies of documents here: never documents, but their arrival is
    # told (their text is merged back), also where only polling sees it.
    copies: dict[str, Stamp] = field(default_factory=dict)


def _trusted(mtime_ns: int) -> int:
    return UNTRUSTED if mtime_ns >= time.time_ns() - RACY_NS else mtime_ns


def list_folder(path: str) -> Folder | None:
    """One folder's markdown files (stamped) and subfolders; None if it cannot be listed."""
    try:
        mtime = os.stat(path).st_mtime_ns
        entries = list(os.scandir(path))
    except OSError as exc:
        _log_error(exc)
        return None
    folder = Folder(_trusted(mtime))
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in IGNORED_DIRS:
                    folder.subdirs.add(entry.path)
            elif wanted_name(entry.name):
                st = entry.stat()
                if stat.S_ISREG(st.st_mode):
                    folder.files[entry.name] = (st.st_mtime_ns, st.st_size, st.st_ino)
            elif conflict_original(entry.name) is not None:
                st = entry.stat()
                if stat.S_ISREG(st.st_mode):
                    folder.copies[entry.name] = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            continue  # gone between the listing and the look: its event says so
    return folder


@dataclass
class TreeIndex:
    """Folders (recursively) and single files, with what is needed to see what changed."""

    folders: dict[str, Folder] = field(default_factory=dict)
    singles: dict[Path, Stamp | None] = field(default_factory=dict)
    close: dict[Path, Stamp | None] = field(default_factory=dict)  # followed files

    def add_tree(self, top: str, found: Callable[[Path], None]) -> None:
        """Index `top` and everything below it, calling `found` for each markdown file."""
        pending = [top]
        while pending:
            path = pending.pop()
            folder = list_folder(path)
            if folder is None:
                continue
            self.folders[path] = folder
            for name in folder.files:
                found(Path(path, name))
            pending.extend(folder.subdirs)

    def orphan_copies(self) -> list[Path]:
        """Conflict copies whose document is not beside them: a tool renamed every side away
        (the copies of a document that is there are found with it)."""
        return [
            Path(dirpath, name)
            for dirpath, folder in self.folders.items()
            for name in folder.copies
            if conflict_original(name) not in folder.files
        ]

    def stamps(self) -> dict[Path, Stamp]:
        """Every indexed markdown file with its recorded stamp."""
        found = {
            Path(dirpath, name): s
            for dirpath, folder in self.folders.items()
            for name, s in folder.files.items()
        }
        found.update((p, s) for p, s in self.singles.items() if s is not None)
        return found

    def follow(self, path: Path, stamp: Stamp | None) -> None:
        """Look at `path` on every rescan, with `stamp` as the version already reported."""
        self.close[path] = stamp
        self._record(path, stamp)

    def rescan(self) -> list[Path]:
        """Paths that appeared, vanished or changed since the last look, at the cost of one
        stat per folder and per followed file, plus a listing of each folder that changed."""
        changed: list[Path] = []
        # Followed files first: what they report is recorded, so a re-listing of their folder
        # in the same pass does not report it again.
        for path, old in list(self.close.items()):
            if (s := stamp_of(path)) != old:
                self.close[path] = s
                self._record(path, s)
                changed.append(path)
        for dirpath in list(self.folders):
            folder = self.folders.get(dirpath)
            if folder is None:
                continue  # dropped with a parent earlier in this pass
            try:
                mtime: int | None = os.stat(dirpath).st_mtime_ns
            except OSError:
                mtime = None
            if mtime is None or mtime != folder.mtime:
                changed += self._relist(dirpath, folder)
        for single in list(self.singles):
            if (s := stamp_of(single)) != self.singles[single]:
                self.singles[single] = s
                changed.append(single)
        return list(dict.fromkeys(changed))

    def sweep(self) -> list[Path]:
        """Markdown files rewritten in place that no rescan looks at: one stat per indexed
        file (never `.git/` or other folders' contents), for polling, where no event tells."""
        changed: list[Path] = []
        for dirpath, folder in list(self.folders.items()):
            for name, old in list(folder.files.items()):
                if (s := stamp_of(os.path.join(dirpath, name))) != old:
                    path = Path(dirpath, name)
                    self._record(path, s)
                    if path in self.close:
                        self.close[path] = s
                    changed.append(path)
        return changed

    def _relist(self, path: str, old: Folder) -> list[Path]:
        fresh = list_folder(path)
        if fresh is None:
            return self._drop(path)
        self.folders[path] = fresh
        changed = [
            Path(path, name)
            for name in old.files.keys() | fresh.files.keys()
            if old.files.get(name) != fresh.files.get(name)
        ]
        for file in changed:
            if file in self.close:
                self.close[file] = fresh.files.get(file.name)
        changed += [
            Path(path, name)
            for name, stamp in fresh.copies.items()
            if old.copies.get(name) != stamp
        ]
        for gone in old.subdirs - fresh.subdirs:
            changed += self._drop(gone)
        for new in fresh.subdirs - old.subdirs:
            self.add_tree(new, changed.append)
        return changed

    def _drop(self, path: str) -> list[Path]:
        folder = self.folders.pop(path, None)
        if folder is None:
            return []
        gone = [Path(path, name) for name in folder.files]
        for sub in folder.subdirs:
            gone += self._drop(sub)
        return gone

    def _record(self, path: Path, stamp: Stamp | None) -> None:
        if path in self.singles:
            self.singles[path] = stamp
            return
        folder = self.folders.get(str(path.parent))
        if folder is None:
            return
        if stamp is None:
            folder.files.pop(path.name, None)
        elif wanted_name(path.name):
            folder.files[path.name] = stamp


def build(
    folders: Iterable[Path], files: Iterable[Path], found: Callable[[Path], None]
) -> TreeIndex:
    """Walk the roots once: the baseline of later rescans."""
    index = TreeIndex()
    for top in folders:
        index.add_tree(str(top), found)
    for single in files:
        index.singles[single] = stamp_of(single)
        if index.singles[single] is not None:
            found(single)
    return index


def maybe_session(data: bytes) -> bool:
    """Cheap pre-check before decoding: session documents start with frontmatter."""
    return data.lstrip(b"\xef\xbb\xbf").startswith(b"---")


HEAD_BYTES = 16 * 1024  # what start-up reads of each note before deciding to read it whole


def starts_as_session(path: Path) -> bool:
    """Whether the file may be a session document, from one read of its start: start-up does
    not read every note of a vault whole (nor twice). A whole note read here without the
    `agentdoc` key is none (its settings must name it in any encoding a document may have)."""
    note_own_open(path)
    return _starts_as_session(path)


def _starts_as_session(path: Path) -> bool:
    try:
        # Not through a file object: start-up does this for each of a vault's notes. Never
        # blocking: a FIFO put where a note was listed opens at once and reads nothing.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        head = b""
        while len(head) < HEAD_BYTES and (more := os.read(fd, HEAD_BYTES - len(head))):
            head += more
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    if not maybe_session(head):
        return False
    return len(head) == HEAD_BYTES or b"agentdoc" in head


def times_ns(path: Path) -> tuple[int, int]:
    """The file's mtime, and when it last changed (see `changed_ns`); zeros if it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return 0, 0
    return st.st_mtime_ns, max(st.st_mtime_ns, st.st_ctime_ns)


def changed_ns(path: Path) -> int:
    """When the file last changed, as far as its own times tell: the later of its mtime and
    its ctime. A sync tool gives a file the sender's mtime, often older than the moment it
    arrived; setting it moves the ctime, which nothing can set back."""
    try:
        st = path.stat()
    except OSError:
        return 0
    return max(st.st_mtime_ns, st.st_ctime_ns)


# A note's stat as the glance saw it: (mtime_ns, ctime_ns, size, inode). The ctime too, as
# nothing can set it back: a tool that writes the same size in place and restores the mtime
# (`rsync --inplace --times`) still moves it.
Glimpse = tuple[int, int, int, int]
# A note changed this recently may change again within the same tick of its filesystem's clock
# without its stat showing it, so the glance does not vouch for it: a clock that counts
# nanoseconds ticks at the kernel's pace (a few milliseconds), one that counts whole seconds
# (FAT, HFS+, ext3) needs RACY_NS.
FINE_RACY_NS = 100_000_000


def _glimpse(st: os.stat_result) -> Glimpse:
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


@dataclass
class Glance:
    """The notes start-up read the start of before the watch began and found no session
    document in, each with its stat then.

    A vault's start-up reads the start of every note once; read while the watch is on, each
    read comes back as two events (an open, a close) that the observer's threads turn into
    objects only to drop them: for 10,000 notes, more CPU than the reads. Read before, the
    walk behind the watch reads again only a note whose stat moved since (or that the glance
    could not vouch for, see FINE_RACY_NS); a save after the watch began is an event as ever.
    """

    # Each note's glimpse kept as its hash: a vault's worth of tuples would stay in the
    # daemon's memory after start-up (freed, but not given back to the system).
    plain: dict[str, int] = field(default_factory=dict)
    closed: bool = False  # start-up is done: nothing asks any more

    def take(self, folders: Iterable[Path], files: Iterable[Path]) -> None:
        """Read the start of every markdown file under the roots. On a thread of its own,
        which may still run once the watch began (a slow folder): `still_plain` is asked of
        what it has found so far, and a note it has not reached is read as ever."""
        now = time.time_ns()

        def look(path: Path) -> None:
            if self.closed:
                return  # start-up is done: a glance still going on reads nothing more
            try:
                st = os.stat(path)
                racy = RACY_NS if st.st_ctime_ns % 1_000_000_000 == 0 else FINE_RACY_NS
                if not stat.S_ISREG(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) > now - racy:
                    return
                # No own-open token: nothing observes these reads, so none would be taken back.
                if not _starts_as_session(path):
                    self.plain[str(path)] = hash(_glimpse(st))
            except OSError:
                return  # read at discovery, which tells what is wrong with it

        try:
            build(folders, files, look)
        except Exception:  # only costs start-up time: every note is read as before
            log.exception("start-up could not glance at the notes; reading each as it is found")

    def close(self) -> None:
        """Start-up is done: what it did not ask for is stale (a glance still going on, in a
        slow folder, keeps nothing more)."""
        self.closed = True
        self.plain.clear()

    def still_plain(self, path: Path) -> bool:
        """Whether `path` is a note the glance read, unchanged since (asked once a note)."""
        seen = self.plain.pop(str(path), None)
        if seen is None:
            return False
        try:
            return hash(_glimpse(os.stat(path))) == seen
        except OSError:
            return False
