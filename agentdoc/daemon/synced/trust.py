"""Which synced folders this machine answers: the `trusted` list in the user's own config.

Anyone who can write into a synced folder (every paired device, every share member) could
otherwise run the agent with this machine's credentials. The list lives only in the local
config file, never in the tree or a document; `agentdoc trust` edits it in place (comments and
other keys kept), and a running daemon reads it again when the file changes.
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomlkit
from tomlkit.exceptions import TOMLKitError

from agentdoc.config import config_path
from agentdoc.errors import AgentdocError

log = logging.getLogger(__name__)


def normal(path: Path | str) -> Path:
    """One spelling per folder: `~` expanded, absolute, symbolic links resolved."""
    return Path(os.path.expanduser(str(path))).resolve()


def covers(trusted: tuple[str, ...] | list[str], path: Path) -> bool:
    """Whether `path` is at or below a trusted folder (an entry that cannot be resolved, a
    loop of symbolic links, covers nothing)."""
    target = normal(path)
    return any(target == root or root in target.parents for root in _resolved(trusted))


def _resolved(trusted: tuple[str, ...] | list[str]) -> list[Path]:
    found = []
    for entry in trusted:
        try:
            found.append(normal(entry))
        except (OSError, RuntimeError):
            continue
    return found


def gone(trusted: tuple[str, ...] | list[str]) -> list[str]:
    """The trusted entries whose folder no longer exists."""
    return [entry for entry in trusted if not os.path.isdir(os.path.expanduser(entry))]


def gone_note(entry: str) -> str:
    return (
        f"the trusted folder {entry} no longer exists; it trusts nothing until it is back "
        f"(`agentdoc trust --remove {entry}` takes it off the list)"
    )


def _load(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        return tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise AgentdocError(f"cannot read config file {path}: {exc}") from exc


def _entries(doc: tomlkit.TOMLDocument, path: Path) -> list[str]:
    value = doc.get("trusted", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AgentdocError(f'{path}: `trusted` must be a list of folder paths, like ["~/notes"]')
    return [str(v) for v in value]


def trusted_list(config: Path | None = None) -> list[str]:
    """The folders the config trusts, as written there."""
    config = config or config_path()
    return _entries(_load(config), config)


def _save(doc: tomlkit.TOMLDocument, entries: list[str], config: Path) -> None:
    doc["trusted"] = entries
    config.parent.mkdir(parents=True, exist_ok=True)
    temp = config.with_name(config.name + ".tmp")
    try:
        temp.write_text(tomlkit.dumps(doc), encoding="utf-8")
        os.replace(temp, config)  # a daemon reading it never sees half a file
    except OSError as exc:
        raise AgentdocError(f"cannot write config file {config}: {exc}") from exc


def trust_folder(folder: Path, config: Path | None = None) -> tuple[Path, bool]:
    """Add `folder` to the trusted list; the folder as recorded, and whether it was new."""
    config = config or config_path()
    if not folder.is_dir():
        raise AgentdocError(f"{folder} is not a folder: trust takes the synced folder to answer")
    doc = _load(config)
    entries = _entries(doc, config)
    recorded = normal(folder)
    if any(normal(e) == recorded for e in entries):
        return recorded, False
    _save(doc, [*entries, str(recorded)], config)
    return recorded, True


def untrust_folder(folder: Path, config: Path | None = None) -> Path:
    """Take `folder` off the trusted list; it must be on it."""
    config = config or config_path()
    doc = _load(config)
    entries = _entries(doc, config)
    gone = normal(folder)
    kept = [e for e in entries if normal(e) != gone]
    if len(kept) == len(entries):
        listed = ", ".join(entries) or "none"
        raise AgentdocError(f"{gone} is not trusted (trusted folders: {listed})")
    _save(doc, kept, config)
    return gone


@dataclass
class TrustList:
    """The trusted folders a running daemon goes by, read again whenever the config changes."""

    initial: tuple[str, ...]
    config: Path = field(default_factory=config_path)
    folders: tuple[str, ...] = field(init=False)
    _stamp: tuple[int, int] | None = field(default=None, init=False)
    _told: set[str] = field(default_factory=set, init=False)

    def __post_init__(self) -> None:
        self.folders = self.initial
        self.refresh()  # the file as it is now, even if the settings were read before
        self._tell_gone()

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = self.config.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def refresh(self) -> bool:
        """Read the list again if the file changed; True if the folders changed."""
        stamp = self._stat()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            data = tomllib.loads(self.config.read_text(encoding="utf-8")) if stamp else {}
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return False  # mid-edit or broken: keep what was trusted until it reads again
        value = data.get("trusted", [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return False
        before, self.folders = self.folders, tuple(value)
        self._tell_gone()
        return before != self.folders

    def _tell_gone(self) -> None:
        """Say once for each trusted entry whose folder is gone: it is kept, and serves none."""
        for entry in gone(self.folders):
            if entry not in self._told:
                self._told.add(entry)
                log.warning("%s", gone_note(entry))

    def covers(self, path: Path) -> bool:
        return covers(self.folders, path)
