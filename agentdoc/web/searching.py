"""The page's search box: the search index, refreshed for the watched roots, as links."""

from __future__ import annotations

import os
from pathlib import Path

from agentdoc.errors import AgentdocError
from agentdoc.web import pages
from agentdoc.web.places import Root, place_of


def search_roots(roots: list[Root], query: str) -> list[pages.Found]:
    """The exchanges under the watched roots that match `query`, linked to where they are."""
    import sqlite3

    from agentdoc.search import connect, key, refresh, search

    folders = [r.only or r.folder for r in roots]
    try:
        conn = connect()
        try:
            refresh(conn, folders)
            hits = search(conn, query, [key(f) for f in folders], limit=50)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise AgentdocError(f"the search index cannot be used: {exc}") from exc
    found = []
    for hit in hits:
        place = place_of(roots, Path(os.fsdecode(hit.document)))
        if place is not None:
            link = pages.href(place.root, place.rel) + f"#turn-{hit.turn}"
            found.append(pages.Found(link, place.rel, hit.turn, hit.text))
    return found
