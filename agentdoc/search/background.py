"""The daemon's side of the index: documents it saw change are re-indexed off its own thread.

Re-indexing a long conversation takes milliseconds to tens of them; the daemon's event loop
must not wait for that, and nothing that goes wrong here may reach it: a failure is logged and
the next search brings the index up to date from the files anyway.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from agentdoc.search.index import update_document
from agentdoc.search.store import connect

log = logging.getLogger(__name__)

# None asks the worker to finish what is queued and end (the daemon stopping).
_pending: queue.SimpleQueue[Path | None] = queue.SimpleQueue()
_started = threading.Lock()
_worker: threading.Thread | None = None


def note_changed(path: Path) -> None:
    """Re-index `path` (with its archive and sidecar) soon; never raises."""
    global _worker
    try:
        _pending.put(path.absolute())
        with _started:
            if _worker is None or not _worker.is_alive():
                _worker = threading.Thread(target=_work, name="agentdoc-search", daemon=True)
                _worker.start()
    except Exception:  # the daemon goes on; the next search refreshes from the files
        log.warning("could not queue %s for the search index", path, exc_info=True)


def stop_indexing(timeout: float) -> None:
    """Index what is queued, then end the worker (waiting up to `timeout` s): a daemon that
    stops leaves no thread of its own behind. A later `note_changed` starts a new one."""
    with _started:
        worker = _worker
        if worker is None or not worker.is_alive():
            return
        _pending.put(None)
    worker.join(timeout)
    if worker.is_alive():
        log.warning("the search index was still being updated when agentdoc stopped")


def _work() -> None:
    ending = False
    while not ending:
        batch: set[Path] = set()
        item = _pending.get()
        while True:
            if item is None:
                ending = True
            else:
                batch.add(item)
            if _pending.empty():
                break
            item = _pending.get()
        if batch:
            _index(batch)


def _index(batch: set[Path]) -> None:
    try:
        conn = connect()  # each batch anew: the state folder may differ between runs
        try:
            for path in sorted(batch):
                update_document(conn, path)
        finally:
            conn.close()
    except Exception:
        log.warning("could not update the search index", exc_info=True)
