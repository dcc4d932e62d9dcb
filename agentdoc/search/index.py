"""Keeping the search index current: which files belong to it, and which changed.

One row per exchange of every session document, archive and (for `--thinking`) sidecar seen.
Each file's modification time, size and content hash are kept, so bringing the index up to date
reads only the files that changed: a look at an unchanged tree is a stat per file. Paths are
stored as the bytes the system uses, so a name that is not UTF-8 is found and shown as it is.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from agentdoc.search.store import transaction

if TYPE_CHECKING:
    from agentdoc.search.exchanges import Exchange, Kind

MAX_BYTES = 64 * 1024 * 1024  # a file this large is not a conversation anyone typed
_SKIPPED_DIRS = {"node_modules", "__pycache__"}
_NAME_MAX = 255  # bytes in a file name, past which the document package shortens sidecars


def key(path: Path) -> bytes:
    return os.fsencode(path.absolute())


def companions(document: Path) -> tuple[tuple[Path, Kind], ...]:
    """The document, its archive and its sidecar, named as agentdoc.document names them
    (`archive_path`, `sidecar_path`) without loading the parser those sit beside: a search
    of an unchanged tree never parses, and starting up is most of its time."""
    sidecar = document.stem + ".thinking.md"
    if len(os.fsencode(sidecar)) > _NAME_MAX:  # rare: skip loading file I/O for the others
        from agentdoc.document import fitting_name

        sidecar = fitting_name(document.stem, ".thinking.md")
    return (
        (document, "document"),
        (document.with_name(document.stem + ".archive.md"), "archive"),
        (document.with_name(sidecar), "thinking"),
    )


def update_document(conn: sqlite3.Connection, document: Path) -> None:
    """Bring one document, its archive and its sidecar up to date."""
    with transaction(conn):
        _update_document(conn, document)


def _update_document(conn: sqlite3.Connection, document: Path) -> None:
    owner = key(document)
    for path, kind in companions(document):
        _update(conn, path, kind, owner)
    row = conn.execute("SELECT mtime_ns FROM sources WHERE path = ?", (owner,)).fetchone()
    if row is not None:
        conn.execute(
            "UPDATE sources SET doc_ns = ? WHERE document = ? AND doc_ns != ?",
            (row[0], owner, row[0]),
        )


def _update(conn: sqlite3.Connection, path: Path, kind: Kind, owner: bytes) -> None:
    where = key(path)
    row = conn.execute(
        "SELECT id, mtime_ns, size, hash FROM sources WHERE path = ?", (where,)
    ).fetchone()
    try:
        st = path.stat()
        if st.st_size > MAX_BYTES:
            raise OSError("too large to index")
        if row is not None and (row[1], row[2]) == (st.st_mtime_ns, st.st_size):
            return
        # The daemon indexes from its own process: its open must not read as an editor's
        # (which starts the document's agent ahead of a prompt). Imported here: an unchanged
        # tree's search reads no file.
        from agentdoc.document import note_own_open

        note_own_open(path)
        data = path.read_bytes()
    except OSError:
        if row is not None:
            _forget(conn, row[0])
        return
    import hashlib  # only for a changed file: an unchanged tree's search does not load it

    hashed = hashlib.blake2b(data, digest_size=16).hexdigest()
    if row is not None and row[3] == hashed:
        conn.execute(
            "UPDATE sources SET mtime_ns = ?, size = ? WHERE id = ?",
            (st.st_mtime_ns, st.st_size, row[0]),
        )
        return
    if row is None:
        source = conn.execute(
            "INSERT INTO sources(path, document, kind, mtime_ns, size, hash) VALUES (?,?,?,?,?,?)",
            (where, owner, kind, st.st_mtime_ns, st.st_size, hashed),
        ).lastrowid
    else:
        source = row[0]
        conn.execute(
            "UPDATE sources SET mtime_ns = ?, size = ?, hash = ? WHERE id = ?",
            (st.st_mtime_ns, st.st_size, hashed, source),
        )
    from agentdoc.search.exchanges import exchanges  # the parser, only for a changed file

    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    _store_exchanges(conn, source, exchanges(text, kind))


def _store_exchanges(conn: sqlite3.Connection, source: int | None, found: list[Exchange]) -> None:
    """Replace only the exchanges that changed: the full-text index tokenises every exchange
    added or removed, and a reply added to a long conversation changes one or two of hundreds
    (re-indexing all of a 1 MiB one took the daemon ~70 ms of CPU per turn). They are told
    apart by digest: reading a long conversation's texts back to compare them, and taking
    agentdoc's own lines out of every reply, took most of the rest."""
    kept: dict[tuple[int, bytes, int, int], int] = {
        (turn, digest, p_line, r_line): rowid
        for rowid, turn, digest, p_line, r_line in conn.execute(
            "SELECT id, turn, digest, prompt_line, reply_line FROM exchanges WHERE source = ?",
            (source,),
        )
    }
    added = []
    for e in found:
        digest = _digest(e)
        if kept.pop((e.turn, digest, e.prompt_line, e.reply_line), None) is None:
            added.append((source, e.turn, e.prompt, e.reply, e.prompt_line, e.reply_line, digest))
    conn.executemany("DELETE FROM exchanges WHERE id = ?", [(rowid,) for rowid in kept.values()])
    conn.executemany(
        "INSERT INTO exchanges(source, turn, prompt, reply, prompt_line, reply_line, digest)"
        " VALUES (?,?,?,?,?,?,?)",
        added,
    )


def _digest(exchange: Exchange) -> bytes:
    import hashlib

    # The prompt's length first: no prompt and reply can be read as another pair.
    prompt = exchange.prompt.encode()
    hashed = hashlib.blake2b(len(prompt).to_bytes(8, "little") + prompt, digest_size=16)
    hashed.update(exchange.text.encode())
    return hashed.digest()


def _forget(conn: sqlite3.Connection, source: int) -> None:
    conn.execute("DELETE FROM exchanges WHERE source = ?", (source,))
    conn.execute("DELETE FROM sources WHERE id = ?", (source,))


def document_of(path: Path) -> Path:
    """The document an archive or (not shortened) sidecar belongs to; other paths as they are."""
    for suffix in (".archive.md", ".thinking.md"):
        if path.name.endswith(suffix) and not path.is_dir():
            return path.with_name(path.name.removesuffix(suffix) + ".md")
    return path


def documents(roots: Iterable[Path]) -> Iterator[Path]:
    """The markdown files under `roots` that may be session documents (archives and sidecars
    come with their documents); hidden folders and node_modules are not looked into."""
    for root in roots:
        if not root.is_dir():
            yield root
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS]
            for name in files:
                if name.endswith(".md") and not name.endswith((".archive.md", ".thinking.md")):
                    yield Path(folder, name)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def refresh(conn: sqlite3.Connection, roots: list[Path]) -> None:
    """Bring the index up to date for everything under `roots`, forgetting what is gone.

    Unchanged files cost a stat and no write: the usual search of an unchanged tree only
    reads the index."""
    known = {
        path: (mtime, size)
        for path, mtime, size in conn.execute("SELECT path, mtime_ns, size FROM sources")
    }
    looked: set[bytes] = set()
    changed = []
    for document in documents(roots):
        stale = False
        for path, _kind in companions(document):
            where = key(path)
            looked.add(where)
            stale = stale or known.get(where) != _stat(path)
        if stale:
            changed.append(document)
    prefixes = [key(r) for r in roots]
    gone = [path for path in known if path not in looked and under(path, prefixes)]
    if not changed and not gone:
        return
    with transaction(conn):
        for document in changed:
            _update_document(conn, document)
        for path in gone:
            row = conn.execute("SELECT id FROM sources WHERE path = ?", (path,)).fetchone()
            if row is not None:
                _forget(conn, row[0])


def under(path: bytes, prefixes: list[bytes]) -> bool:
    sep = os.sep.encode()
    return any(path == p or path.startswith(p.rstrip(sep) + sep) for p in prefixes)
