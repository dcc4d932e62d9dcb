"""A document indexed again after a turn: only the exchanges that changed are replaced."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentdoc.search import connect, key, search
from agentdoc.search.index import update_document
from agentdoc.search.query import Hit
from agentdoc.search.store import index_path
from tests.support.conversations import conversation

PAIRS = [("What is a widget?", "A thing."), ("Colours?", "Red widgets."), ("Size?", "Small.")]


def rows(path: Path) -> dict[int, int]:
    """Each exchange's turn and row id."""
    conn = connect()
    try:
        found = conn.execute(
            "SELECT e.turn, e.id FROM exchanges e JOIN sources s ON s.id = e.source"
            " WHERE s.path = ?",
            (key(path),),
        )
        return dict(found)
    finally:
        conn.close()


def find(words: str, folder: Path) -> list[Hit]:
    conn = connect()
    try:
        return search(conn, words, [key(folder)])
    finally:
        conn.close()


def index(path: Path) -> None:
    conn = connect()
    try:
        update_document(conn, path)
    finally:
        conn.close()


def test_a_reply_added_keeps_the_earlier_exchanges_and_finds_the_new_one(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(conversation(PAIRS))
    index(doc)
    before = rows(doc)
    other = tmp_path / "other.md"  # indexed since: rows added again would get new ids
    other.write_text(conversation(PAIRS))
    index(other)
    doc.write_text(conversation([*PAIRS, ("Weight?", "Light as a gizmo.")]))
    index(doc)
    after = rows(doc)
    assert {turn: after[turn] for turn in before} == before  # not removed and added again
    assert sorted(after) == [0, 1, 2, 3, 4]  # 0: the title, before the first turn
    [hit] = find("gizmo", tmp_path)
    assert hit.turn == 4


def test_an_edited_reply_is_replaced_and_the_old_words_are_gone(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(conversation(PAIRS))
    index(doc)
    before = rows(doc)
    doc.write_text(conversation([PAIRS[0], ("Colours?", "Blue gizmos."), PAIRS[2]]))
    index(doc)
    after = rows(doc)
    assert after[1] == before[1] and after[3] == before[3] and after[2] != before[2]
    assert [hit.turn for hit in find("gizmos", tmp_path)] == [2]
    assert find("red", tmp_path) == []


def test_an_index_from_the_version_before_is_rebuilt_and_finds_the_documents(
    tmp_path: Path,
) -> None:
    """The exchanges' digests came with format 3: an index agentdoc wrote before (format 2, no
    digest column) is dropped and built again from the files."""
    doc = tmp_path / "chat.md"
    doc.write_text(conversation(PAIRS))
    index_path().parent.mkdir(parents=True)
    old = sqlite3.connect(index_path())
    old.executescript(
        "CREATE TABLE sources(id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL,"
        " document BLOB NOT NULL, kind TEXT NOT NULL, mtime_ns INTEGER NOT NULL,"
        " size INTEGER NOT NULL, hash TEXT NOT NULL, doc_ns INTEGER NOT NULL DEFAULT 0);"
        "CREATE TABLE exchanges(id INTEGER PRIMARY KEY, source INTEGER NOT NULL,"
        " turn INTEGER NOT NULL, prompt TEXT NOT NULL, reply TEXT NOT NULL,"
        " prompt_line INTEGER NOT NULL, reply_line INTEGER NOT NULL);"
        "PRAGMA user_version=2;"
    )
    old.close()
    index(doc)
    [hit] = find("red", tmp_path)
    assert hit.turn == 2
    before = rows(doc)
    doc.write_text(conversation([*PAIRS, ("Weight?", "Light as a gizmo.")]))
    index(doc)  # again after a turn: the exchanges kept are told apart by their digests
    [hit] = find("gizmo", tmp_path)
    assert hit.turn == 4 and rows(doc) == before | {4: rows(doc)[4]}
