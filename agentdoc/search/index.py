"""The search index: an SQLite FTS5 table of exchanges, kept in agentdoc's state folder.

One row per exchange of every session document, archive and (for `--thinking`) sidecar seen.
Each file's modification time, size and content hash are kept, so bringing the index up to date
reads only the files that changed: a look at an unchanged tree is a stat per file. Paths are
stored as the bytes the system uses, so a name that is not UTF-8 is found and shown as it is.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentdoc.document import fitting_name

if TYPE_CHECKING:
    from agentdoc.search.exchanges import Kind

SCHEMA_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # a file this large is not a conversation anyone typed
_SKIPPED_DIRS = {"node_modules", "__pycache__"}
_SCHEMA = (
    """
CREATE TABLE sources(
    id INTEGER PRIMARY KEY,
    path BLOB UNIQUE NOT NULL,
    document BLOB NOT NULL,  -- the session document the file belongs to
    kind TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    doc_ns INTEGER NOT NULL DEFAULT 0  -- the document's mtime: newest conversations first
)
""",
    """
CREATE INDEX sources_document ON sources(document)
""",
    """
CREATE TABLE exchanges(
    id INTEGER PRIMARY KEY,
    source INTEGER NOT NULL,
    turn INTEGER NOT NULL,
    prompt TEXT NOT NULL,
    reply TEXT NOT NULL,
    prompt_line INTEGER NOT NULL,
    reply_line INTEGER NOT NULL
)
""",
    """
CREATE INDEX exchanges_source ON exchanges(source)
""",
    """
CREATE VIRTUAL TABLE exchanges_fts USING fts5(
    prompt, reply, content='exchanges', content_rowid='id',
    tokenize='porter unicode61 remove_diacritics 2'
)
""",
    """
CREATE TRIGGER exchanges_added AFTER INSERT ON exchanges BEGIN
    INSERT INTO exchanges_fts(rowid, prompt, reply) VALUES (new.id, new.prompt, new.reply);
END
""",
    """
CREATE TRIGGER exchanges_removed AFTER DELETE ON exchanges BEGIN
    INSERT INTO exchanges_fts(exchanges_fts, rowid, prompt, reply)
        VALUES ('delete', old.id, old.prompt, old.reply);
END
""",
)


def state_root(environ: Mapping[str, str] | None = None) -> Path:
    """agentdoc's state folder: $AGENTDOC_STATE_DIR, else the XDG state folder."""
    env = os.environ if environ is None else environ
    if env.get("AGENTDOC_STATE_DIR"):
        return Path(env["AGENTDOC_STATE_DIR"])
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]) / "agentdoc"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    return home / ".local" / "state" / "agentdoc"


def index_path() -> Path:
    return state_root() / "search.sqlite3"


def connect(path: Path | None = None) -> sqlite3.Connection:
    """The index, created (or rebuilt after a format change) when needed."""
    path = path or index_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return _open(path)
    except sqlite3.DatabaseError as exc:
        if "not a database" not in str(exc) and "malformed" not in str(exc):
            raise
    # Only a copy of what the documents hold: a damaged one is dropped and built again.
    for damaged in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm"))):
        with contextlib.suppress(FileNotFoundError):
            damaged.unlink()
    return _open(path)


def _open(path: Path) -> sqlite3.Connection:
    # It holds copies of the conversations: readable by their owner only, like the documents'
    # state (SQLite gives its journal files the same mode).
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    try:
        with contextlib.suppress(sqlite3.OperationalError):  # another connection set it first
            conn.execute("PRAGMA journal_mode=WAL")  # the daemon writes while a search reads
        conn.execute("PRAGMA synchronous=NORMAL")  # it can always be rebuilt from the files
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            _rebuild(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _rebuild(conn: sqlite3.Connection) -> None:
    """A new index, or one from another version of agentdoc, gets this version's tables."""
    with transaction(conn):
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
            return  # another process built it while this one waited
        old = conn.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger')"
            " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'exchanges_fts_%'"
        ).fetchall()
        for kind, name in old:
            conn.execute(f'DROP {kind} IF EXISTS "{name}"')
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def key(path: Path) -> bytes:
    return os.fsencode(path.absolute())


def companions(document: Path) -> tuple[tuple[Path, Kind], ...]:
    """The document, its archive and its sidecar, named as agentdoc.document names them
    (`archive_path`, `sidecar_path`) without loading the parser those sit beside: a search
    of an unchanged tree never parses, and starting up is most of its time."""
    return (
        (document, "document"),
        (document.with_name(document.stem + ".archive.md"), "archive"),
        (document.with_name(fitting_name(document.stem, ".thinking.md")), "thinking"),
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
        data = path.read_bytes()
    except OSError:
        if row is not None:
            _forget(conn, row[0])
        return
    hashed = hashlib.blake2b(data, digest_size=16).hexdigest()
    if row is not None and row[3] == hashed:
        conn.execute(
            "UPDATE sources SET mtime_ns = ?, size = ? WHERE id = ?",
            (st.st_mtime_ns, st.st_size, row[0]),
        )
        return
    if row is not None:
        _forget(conn, row[0])
    source = conn.execute(
        "INSERT INTO sources(path, document, kind, mtime_ns, size, hash) VALUES (?,?,?,?,?,?)",
        (where, owner, kind, st.st_mtime_ns, st.st_size, hashed),
    ).lastrowid
    from agentdoc.search.exchanges import exchanges  # the parser, only for a changed file

    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    conn.executemany(
        "INSERT INTO exchanges(source, turn, prompt, reply, prompt_line, reply_line)"
        " VALUES (?,?,?,?,?,?)",
        [
            (source, e.turn, e.prompt, e.reply, e.prompt_line, e.reply_line)
            for e in exchanges(text, kind)
        ],
    )


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
