"""Where agentdoc keeps its own state for the documents of a folder: one decision.

Beside the documents, in a `.agentdoc/` folder, as long as nothing carries that folder to
other machines. In a synced folder (a sync tool's marker above it, or `synced = [...]` in the
config) it would travel: every device would get this machine's locks, statuses and journals,
and Syncthing makes conflict copies of a lock two machines both write. There it lives under
this machine's own state folder instead, in a tree that mirrors the synced folder:
`USER_STATE/synced/NAME-HASH/SUBFOLDER/.agentdoc/`, HASH naming the synced folder by its
resolved path. Claims (`.agentdoc-claims/`) are not state of this machine's and stay in the
tree: other machines must see them.

A `.agentdoc/` already in a synced folder (made before, or by an older agentdoc) is moved out
by :func:`move_out`, keeping both files when a name is taken on both sides.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from agentdoc.config import Settings, config_path, load_settings
from agentdoc.errors import AgentdocError
from agentdoc.syncmarks import SyncedFolder, synced_folder
from agentdoc.userstate import user_state_dir

log = logging.getLogger(__name__)

STATE = ".agentdoc"
SYNCED = "synced"  # under the user's state folder: the mirrors of synced folders
ROOT_FILE = "ROOT"  # in a mirror: the synced folder it stands for, so a walk can map it back
DROPPED = (".gitignore", "daemon.lock")  # on a clash, the tree's copy of these means nothing
NOT_WALKED = frozenset({STATE, ".git", ".hg", ".svn"})  # no state folder of ours inside
IGNORE_ALL = "# agentdoc's own state: kept out of version control\n*\n"

_listed: tuple[tuple[int, int] | None, Settings] | None = None


def _config_synced() -> Settings:
    """The config's `synced = [...]` list (read again only when the file changed); a config
    that cannot be read lists nothing here, and says why where it is loaded for real."""
    global _listed
    try:
        info = config_path().stat()
        stamp: tuple[int, int] | None = (info.st_mtime_ns, info.st_size)
    except OSError:
        stamp = None
    if _listed is None or _listed[0] != stamp:
        try:
            settings = Settings(synced=load_settings().synced)
        except AgentdocError:
            settings = Settings()
        _listed = (stamp, settings)
    return _listed[1]


def synced_of(folder: Path) -> SyncedFolder | None:
    """The synced folder `folder` is in, if any."""
    return synced_folder(folder, _config_synced())


def mirror_root(root: Path) -> Path:
    """This machine's folder for the state of the synced folder `root` (resolved)."""
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    # The name only helps a person find it (the hash tells the folders apart): kept short, so
    # a long folder name cannot make it longer than a file name may be.
    return user_state_dir() / SYNCED / f"{root.name[:40] or 'root'}-{key}"


def _mirror(folder: Path, synced: SyncedFolder) -> Path:
    resolved = Path(os.path.abspath(folder.expanduser())).resolve()
    top = mirror_root(synced.root)
    _roots[top] = synced.root
    return top.joinpath(*resolved.relative_to(synced.root).parts)


# Looking for the markers lists every folder above (milliseconds under a big /tmp or home), and
# a turn asks for its state folder many times: the answer is kept this long per folder.
FRESH_FOR = 2.0
_decided: dict[tuple[Path, Path], tuple[float, Path]] = {}


def state_folder(folder: Path) -> Path:
    """The `.agentdoc/` folder for the documents directly in `folder`."""
    now = time.monotonic()
    key = (folder, user_state_dir())  # a mirror is where this process's state folder is
    known = _decided.get(key)
    if known is not None and now - known[0] < FRESH_FOR:
        return known[1]
    synced = synced_of(folder)
    found = folder / STATE if synced is None else _mirror(folder, synced) / STATE
    if folder.is_absolute():  # a relative one means another folder once the cwd changes
        if len(_decided) > 4096:
            _decided.clear()
        _decided[key] = (now, found)
    return found


def make_state_folder(state: Path) -> None:
    """Create a state folder (if missing) that ignores itself: its status, journal and
    history files churn on every turn, and committed they would block a `git checkout`.
    A mirror's top is told which synced folder it stands for."""
    if state.is_dir():
        return
    # In the tree, the documents' folder must exist (a state folder does not bring back a
    # folder deleted meanwhile); a mirror is made with every folder above it.
    mirrored = (user_state_dir() / SYNCED) in state.parents
    state.mkdir(parents=mirrored, exist_ok=True)
    with contextlib.suppress(OSError):  # the state files themselves matter more
        (state / ".gitignore").write_text(IGNORE_ALL, encoding="utf-8")
    if mirrored:
        _note_root(state)
        _take_from_tree(state)


def _take_from_tree(state: Path) -> None:
    """The state an older agentdoc left in the tree for this mirror, moved into it."""
    base = user_state_dir() / SYNCED
    top = base / state.relative_to(base).parts[0]
    synced = _roots.get(top)
    if synced is None:
        return
    in_tree = synced.joinpath(*state.relative_to(top).parts)
    if in_tree.is_dir():
        try:
            kept = _merge(in_tree, state)
            _drop_if_empty(in_tree)
        except OSError as exc:
            log.warning("could not move %s out of the synced folder: %s", in_tree, exc)
            return
        log.warning("%s", _moved(in_tree, state, kept))


def _note_root(state: Path) -> None:
    base = user_state_dir() / SYNCED
    if base not in state.parents:
        return
    top = base / state.relative_to(base).parts[0]
    synced = _roots.get(top)
    if synced is None or (top / ROOT_FILE).exists():
        return
    with contextlib.suppress(OSError):
        (top / ROOT_FILE).write_text(str(synced), encoding="utf-8")


_roots: dict[Path, Path] = {}  # mirror top -> the synced folder it stands for


def state_folders(root: Path) -> Iterator[tuple[Path, Path]]:
    """Every state folder of the tree `root`: (the documents' folder, its `.agentdoc/`), in
    the tree itself and in the mirrors of the synced folders in it or around it."""
    seen: set[Path] = set()
    for state in _walk(root):
        if state.is_dir() and state not in seen:
            seen.add(state)
            yield state.parent, state
    base = user_state_dir() / SYNCED
    try:
        tops = list(base.iterdir())
    except OSError:
        return
    target = Path(os.path.abspath(root)).resolve()
    for top in tops:
        try:
            synced = Path((top / ROOT_FILE).read_text(encoding="utf-8").strip())
        except OSError:
            continue
        if not synced.is_absolute():
            continue
        yield from _mirrored(top, synced, target)


def _mirrored(top: Path, synced: Path, target: Path) -> Iterator[tuple[Path, Path]]:
    if target == synced or target.is_relative_to(synced):
        start = top.joinpath(*target.relative_to(synced).parts)
    elif synced.is_relative_to(target):
        start = top
    else:
        return
    for state in _walk(start):
        if state.is_dir():
            yield synced.joinpath(*state.parent.relative_to(top).parts), state


def _walk(start: Path) -> Iterator[Path]:
    """`.agentdoc` folders at or below `start`, not looking inside them."""
    for folder, dirs, _files in os.walk(start):
        if STATE in dirs:
            yield Path(folder) / STATE
        dirs[:] = [d for d in dirs if d not in NOT_WALKED]


def move_out(root: Path) -> list[str]:
    """Move the `.agentdoc/` folders found in the synced parts of the tree `root` to where
    their state now lives; what was done, in words for the log. A file whose name is taken
    there already is kept under a new name beside it: nothing is lost."""
    told: list[str] = []
    if synced_of(root) is None:
        # A synced folder below an ordinary one is not looked for (that would be a walk of the
        # whole tree): its state moves when agentdoc first writes state there.
        return told
    for state in list(_walk(root)):
        target = state_folder(state.parent)
        if target == state or not state.is_dir():
            continue
        try:
            make_state_folder(target)
            _note_root(target)  # made by an agentdoc before it noted which folder it mirrors
            kept = _merge(state, target)
            _drop_if_empty(state)
        except OSError as exc:
            told.append(f"could not move {state} out of the synced folder: {exc}")
            continue
        told.append(_moved(state, target, kept))
    return told


def _moved(state: Path, target: Path, kept: list[str]) -> str:
    both = f" (kept both copies of {', '.join(kept)})" if kept else ""
    return (
        f"moved {state} to {target}{both}: in a synced folder agentdoc's own state (locks, "
        "statuses, journals) would reach every device"
    )


def _merge(source: Path, target: Path) -> list[str]:
    """Move what `source` holds into `target`; the names kept twice."""
    kept: list[str] = []
    for entry in sorted(source.iterdir()):
        there = target / entry.name
        if entry.name in DROPPED and there.exists():
            entry.unlink()  # the mirror's own, or a lock nobody holds (ours is taken there)
        elif entry.is_dir() and not entry.is_symlink() and there.is_dir():
            kept += [f"{entry.name}/{name}" for name in _merge(entry, there)]
            _drop_if_empty(entry)
        elif there.exists() or there.is_symlink():
            if not _same(entry, there):
                shutil.move(entry, _free_name(there))
                kept.append(entry.name)
            else:
                entry.unlink()
        else:
            shutil.move(entry, there)
    return kept


def _same(one: Path, other: Path) -> bool:
    try:
        return one.is_file() and other.is_file() and one.read_bytes() == other.read_bytes()
    except OSError:
        return False


def _free_name(taken: Path) -> Path:
    for n in range(1, 1000):
        candidate = taken.with_name(f"{taken.name}.from-synced-folder{'' if n == 1 else n}")
        if not candidate.exists():
            return candidate
    raise OSError(f"no free name beside {taken}")


def _drop_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()
