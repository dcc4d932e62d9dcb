"""Full-text search over session documents, their archives and thinking sidecars.

An SQLite FTS5 index in agentdoc's state folder; the daemon keeps it current as documents
change (`note_changed`), and a search brings it up to date for the folders it looks in. Other
packages import the names in ``__all__`` from here; each loads its submodule on first use.
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.search.background import note_changed as note_changed
    from agentdoc.search.background import stop_indexing as stop_indexing
    from agentdoc.search.index import document_of as document_of
    from agentdoc.search.index import key as key
    from agentdoc.search.index import refresh as refresh
    from agentdoc.search.query import Hit as Hit
    from agentdoc.search.query import search as search
    from agentdoc.search.store import connect as connect
    from agentdoc.search.store import index_path as index_path

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "background": ("note_changed", "stop_indexing"),
        "index": ("document_of", "key", "refresh"),
        "query": ("Hit", "search"),
        "store": ("connect", "index_path"),
    },
)
