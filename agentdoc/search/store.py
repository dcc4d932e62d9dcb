"""Where the search index lives and its tables: one SQLite file in agentdoc's state folder.

`connect` opens it, creating the tables (or rebuilding them after a format change, or when the
file is damaged: the index is only a copy of what the documents hold). Writes happen in
`transaction`s, so a search never sees half a document.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from agentdoc.userstate import user_state_dir

# 2: agentdoc's own lines left out of replies; titles indexed (as turn 0).
# 3: each exchange's digest, so a document indexed again is compared without reading it back.
SCHEMA_VERSION = 3
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
    reply_line INTEGER NOT NULL,
    digest BLOB NOT NULL  -- of the prompt and the reply as the file has them
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


def index_path() -> Path:
    return user_state_dir() / "search.sqlite3"


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
