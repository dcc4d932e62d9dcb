"""A shadow git repository that keeps what a folder's files were, outside the user's tree.

git does the work: its index remembers each file's stat data, so a snapshot of an unchanged
tree only lists the folder (``ls-files`` over the stat cache) and writes no object. Each folder
gets its own index (``GIT_INDEX_FILE``) in the shadow repository; the folder's own ``.git`` is
never read or written (git never descends into a ``.git``; the shadow's ``GIT_DIR`` is ours).

Bytes are kept exactly: the shadow's ``info/attributes`` (which wins over any ``.gitattributes``
in the folder) turns off every conversion and filter, and the settings a folder or the user's
git config could use to run a command (fsmonitor, filters) are off. Files over `FILE_LIMIT` and
nested git repositories are not kept; a snapshot names them, with what a later look at them can
compare, so an undo can refuse rather than guess.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.document import TEMP_PREFIX, note_own_open
from agentdoc.errors import AgentdocError
from agentdoc.localstate import state_folder
from agentdoc.records.ignores import user_excludes

FILE_LIMIT = 20 * 1024 * 1024  # bytes: a bigger file is named in the snapshot, not kept
MAX_NEW_FILES = 50_000  # files a snapshot adds at once; more means a folder too big to keep
GIT_TIMEOUT = 120.0  # seconds for one git command (a first snapshot of a big tree)
GIVE_UP_FOR = 24 * 3600.0  # seconds a folder found too big is not tried again
ABSENT = "0" * 40
_DOCUMENT_SUFFIXES = frozenset({".md", ".markdown"})  # what a daemon may watch as a document
_DOCUMENT_PATHS = tuple(f":(glob,icase)**/*{suffix}" for suffix in sorted(_DOCUMENT_SUFFIXES))
REPOSITORY = "repository"  # what a snapshot says of a nested git repository it did not enter
_OVERRIDES = (
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.ignoreCase=false",
    "core.quotePath=false",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "index.threads=1",
    "gc.auto=0",
    # Every file streams into one pack per command instead of a loose object each: a first
    # snapshot of 10,000 files takes about a second rather than ten (and no deltas are tried).
    "core.bigFileThreshold=1",
)
MAX_PACKS = 50  # packs (one per snapshot that found changes) before they are joined into one
# Wins over the folder's own .gitattributes: no eol conversion, no filter driver, no encoding.
_ATTRIBUTES = "* -text !eol -filter -ident !working-tree-encoding\n"


class ShadowError(AgentdocError):
    pass


class TooBig(ShadowError):
    """The folder is too big to keep a copy of."""


@dataclass(frozen=True)
class Entry:
    """One file as a tree holds it: git's mode (``100644``, ``100755``, ``120000``) and blob."""

    mode: str
    blob: str


@dataclass(frozen=True)
class Change:
    path: str  # relative to the folder, '/'-separated
    before: Entry | None  # None: the file did not exist
    after: Entry | None


@dataclass(frozen=True)
class Snapshot:
    tree: str
    # Files not kept (too big, a repository of their own): path -> what `fingerprint` said.
    skipped: Mapping[str, str] = field(default_factory=dict)


def fingerprint(path: Path) -> str:
    """Size and modification time: enough to tell an unkept file changed between snapshots."""
    try:
        info = path.lstat()
    except OSError:
        return "absent"
    return f"{info.st_size}:{info.st_mtime_ns}"


def blob_id(path: Path) -> Entry | None:
    """The entry ``path`` would have in a tree now (None: no such file), without git."""
    try:
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            data, mode = os.fsencode(os.readlink(path)), "120000"
        elif stat.S_ISREG(info.st_mode):
            data = path.read_bytes()
            mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
        else:
            return None
    except (FileNotFoundError, NotADirectoryError):
        return None
    digest = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False)
    return Entry(mode, digest.hexdigest())


class Shadow:
    """The shadow repository at ``git_dir`` (created on first use)."""

    def __init__(self, git_dir: Path, environ: Mapping[str, str] | None = None) -> None:
        self.git_dir = git_dir
        base = os.environ if environ is None else environ
        # The user's global git config stays (their core.excludesFile); the system one and
        # anything naming the user's own repository do not.
        keep = ("PATH", "HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "SYSTEMROOT")
        self._env = {k: base[k] for k in keep if k in base}
        self._env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_DIR": str(git_dir)})

    # -- plumbing -------------------------------------------------------------------------------

    def _git(
        self,
        args: Sequence[str],
        *,
        folder: Path | None = None,
        index: Path | None = None,
        data: bytes | None = None,
    ) -> bytes:
        env = dict(self._env)
        if folder is not None:
            env["GIT_WORK_TREE"] = str(folder)
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        argv = ["git"]
        for setting in _OVERRIDES:
            argv += ["-c", setting]
        try:
            done = subprocess.run(
                [*argv, *args],
                cwd=folder or self.git_dir,
                env=env,
                input=data,
                capture_output=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise TooBig(
                f"git {args[0]} took more than {GIT_TIMEOUT:.0f} s in {folder or self.git_dir}; "
                "undo cannot cover it (list what the agent should not see in a .gitignore)"
            ) from exc
        except (OSError, subprocess.SubprocessError) as exc:
            raise ShadowError(f"git {args[0]} failed: {exc}") from exc
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip()[-400:]
            raise ShadowError(f"git {args[0]} failed (exit {done.returncode}): {said}")
        return done.stdout

    def _ensure(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.mkdir(parents=True, exist_ok=True)
        self._git(["init", "--quiet", "--bare", str(self.git_dir)])
        info = self.git_dir / "info"
        info.mkdir(exist_ok=True)
        (info / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")

    def index_for(self, folder: Path) -> Path:
        key = hashlib.sha256(os.fsencode(folder)).hexdigest()[:16]
        return self.git_dir / f"index-{key}"

    # -- snapshots ----------------------------------------------------------------------------

    def snapshot(
        self, folder: Path, exclude: Sequence[str] = (), keep_as: str | None = None
    ) -> Snapshot:
        """Record ``folder``'s files as they are now, but for ``exclude`` (paths in it).

        A folder found too big (too many files, git too slow) is not tried again for
        `GIVE_UP_FOR`: each turn would pay for the same long walk and fail again.
        """
        self._ensure()
        index = self.index_for(folder)
        too_big = index.with_suffix(".too-big")
        with contextlib.suppress(OSError, UnicodeDecodeError):
            if time.time() - too_big.stat().st_mtime < GIVE_UP_FOR:
                raise ShadowError(too_big.read_text(encoding="utf-8"))
        try:
            return self._snapshot(folder, index, exclude, keep_as)
        except TooBig as exc:
            with contextlib.suppress(OSError):
                too_big.write_text(str(exc), encoding="utf-8")
            raise

    def _snapshot(
        self, folder: Path, index: Path, exclude: Sequence[str], keep_as: str | None
    ) -> Snapshot:
        self._drop_documents(folder, index)
        listed = self._git(
            [
                "ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard",
                *user_excludes(folder, index.with_suffix(".inherited")), "--", ".",
                *_excluded(exclude),
            ],
            folder=folder,
            index=index,
        )  # fmt: skip
        names = sorted({n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n})
        if len(names) > MAX_NEW_FILES:
            raise TooBig(
                f"{folder} has more than {MAX_NEW_FILES:,} files to keep a copy of; undo cannot "
                "cover it (list what the agent should not see in a .gitignore)"
            )
        keep, skipped, documents = _sort_out(folder, names)
        if keep:
            _note_reads(folder, keep, times=2)  # hashed, then checked again as the index is written
            self._update(folder, index, ["--add", "--remove", "--replace"], keep)
        if skipped or documents:  # kept before, not now: their old copies must not stay
            self._update(folder, index, ["--force-remove"], [*skipped, *documents])
        tree = self._git(["write-tree"], folder=folder, index=index).decode().strip()
        # The index's blobs stay reachable (a prune must not take what the next write-tree
        # names), and so does the tree itself (`keep_as`) until the turn that needs it is gone.
        refs = [f"latest/{index.name}", *([keep_as] if keep_as else [])]
        stdin = "".join(f"update refs/{r} {tree}\n" for r in refs).encode()
        self._git(["update-ref", "--stdin"], data=stdin)
        if keep and len(list((self.git_dir / "objects" / "pack").glob("*.pack"))) > MAX_PACKS:
            self._git(["repack", "-a", "-d", "-q"])  # all the indexes' blobs have refs by now
        return Snapshot(tree, skipped)

    def _drop_documents(self, folder: Path, index: Path) -> None:
        """git reads a file its index holds again, as often as it likes, when the file changed
        in the clock tick the index was written ("racily clean"): a document recorded before
        it became a session document leaves the index before the listing can read it (and a
        watching daemon take that for a person opening it). `--cached` alone reads no file."""
        listed = self._git(
            ["ls-files", "-z", "--cached", "--", *_DOCUMENT_PATHS], folder=folder, index=index
        )
        names = [n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n]
        states: dict[Path, set[str]] = {}
        documents = [n for n in names if is_document(folder / n, states)]
        if documents:
            self._update(folder, index, ["--force-remove"], documents)
        _note_reads(folder, sorted(set(names) - set(documents)))

    def _update(self, folder: Path, index: Path, how: list[str], names: list[str]) -> None:
        stdin = b"".join(os.fsencode(n) + b"\0" for n in names)
        self._git(["update-index", "-z", *how, "--stdin"], folder=folder, index=index, data=stdin)

    def drop(self, refs: Sequence[str], *, prune: bool = True) -> None:
        """Forget the named refs, and with ``prune`` the objects only they held."""
        if not refs or not (self.git_dir / "HEAD").exists():
            return
        stdin = "".join(f"delete refs/{r}\n" for r in refs).encode()
        self._git(["update-ref", "--stdin"], data=stdin)
        if prune:  # the packs keep only what a ref still reaches, then the loose objects go
            self._git(["repack", "-a", "-d", "-q"])
            self._git(["prune", "--expire=now"])

    def changes(self, before: str, after: str) -> list[Change]:
        """What differs between two trees, file by file."""
        raw = self._git(["diff-tree", "-r", "-z", "--no-renames", before, after])
        fields = raw.decode("utf-8", "surrogateescape").split("\0")
        found = []
        for meta, path in zip(fields[0::2], fields[1::2], strict=False):
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old, new, _status = meta[1:].split(" ")
            found.append(Change(path, _entry(old_mode, old), _entry(new_mode, new)))
        return found

    def read_blob(self, blob: str) -> bytes:
        return self._git(["cat-file", "blob", blob])

    def read_blobs(self, blobs: Sequence[str]) -> dict[str, bytes]:
        """Many blobs through one git process (ShadowError if one is missing)."""
        wanted = sorted(set(blobs))
        if not wanted:
            return {}
        out = self._git(["cat-file", "--batch"], data="".join(f"{b}\n" for b in wanted).encode())
        found: dict[str, bytes] = {}
        at = 0
        for blob in wanted:
            end = out.index(b"\n", at)
            header = out[at:end].decode("ascii", "replace").split()
            if len(header) != 3 or header[1] != "blob":
                raise ShadowError(f"the snapshot lost a file's copy ({blob}: {' '.join(header)})")
            size = int(header[2])
            found[blob] = out[end + 1 : end + 1 + size]
            at = end + 1 + size + 1  # the content is followed by a newline
        return found


def _entry(mode: str, blob: str) -> Entry | None:
    return None if blob == ABSENT or mode == "000000" else Entry(mode, blob)


def _note_reads(folder: Path, names: Sequence[str], times: int = 1) -> None:
    """git is about to read these files (up to `times` each): a watching daemon must not take
    its reading of another document for a person opening it in an editor (and close the warm
    agent just used to start that document's ahead)."""
    for name in names:
        if os.path.splitext(name)[1].lower() in _DOCUMENT_SUFFIXES:
            for _ in range(times):
                note_own_open(folder / name)


def _excluded(paths: Sequence[str]) -> list[str]:
    # agentdoc's state folders, at any depth: other documents' status files are no turn's work.
    # Nor are its half-written files: a snapshot taken while a reply is written can meet one,
    # and undo would put back a file nobody made.
    own = [":(exclude,glob)**/.agentdoc/**", f":(exclude,glob)**/{TEMP_PREFIX}*"]
    return [f":(exclude,literal){p}" for p in paths] + own


def _sort_out(folder: Path, names: Sequence[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """The names to record, those not kept (with their fingerprints), and session documents."""
    keep: list[str] = []
    skipped: dict[str, str] = {}
    documents: list[str] = []
    states: dict[Path, set[str]] = {}
    for name in names:
        path = folder / name
        if name.endswith("/"):  # an untracked folder git will not enter: a repository
            skipped[name.rstrip("/")] = REPOSITORY
            continue
        if is_document(path, states):
            documents.append(name)
            continue
        try:
            info = path.lstat()
        except OSError:
            keep.append(name)  # gone: its entry leaves the index
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > FILE_LIMIT:
            skipped[name] = fingerprint(path)
        else:
            keep.append(name)
    return keep, skipped, documents


def is_document(path: Path, states: dict[Path, set[str]]) -> bool:
    """A session document (agentdoc keeps state for it beside it): its conversation is
    agentdoc's to keep, and undoing one document's turn must not rewind another's. Not reading
    it also keeps a watching daemon from taking git's read for a person opening it."""
    if os.path.splitext(path.name)[1].lower() not in _DOCUMENT_SUFFIXES:
        return False
    folder = path.parent
    if folder not in states:
        try:
            states[folder] = set(os.listdir(state_folder(folder)))
        except OSError:
            states[folder] = set()
    prefix = path.name + "."
    return any(n.startswith(prefix) for n in states[folder])
