"""agentdoc's own scratch files (temp files of its writes, its state folder) are dropped by the
event handler before any look at the watched roots; a temp file renamed over a document is the
document's save."""

from __future__ import annotations

from pathlib import Path

from watchdog.events import (
    DirModifiedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
)

from agentdoc.daemon.watch.fsevents import EventHandler
from agentdoc.daemon.watch.roots import Roots, plan_roots


class CountingRoots(Roots):
    asked: list[Path]

    def wants(self, path: Path) -> bool:
        self.asked.append(path)
        return super().wants(path)


def _handler(tmp_path: Path) -> tuple[EventHandler, CountingRoots, list[tuple[Path, bool]]]:
    plan = plan_roots([tmp_path])
    roots = CountingRoots(plan.folders, plan.files)
    object.__setattr__(roots, "asked", [])
    got: list[tuple[Path, bool]] = []
    return EventHandler(roots, got.append, lambda _p: None), roots, got


def test_events_of_own_scratch_files_are_dropped_before_the_roots_are_asked(
    tmp_path: Path,
) -> None:
    handler, roots, got = _handler(tmp_path)
    temp = str(tmp_path / ".agentdoc-tmp-1a2b3c")
    state = str(tmp_path / ".agentdoc" / "chat.md.status.json")
    events: list[FileSystemEvent] = [
        FileCreatedEvent(temp),
        FileModifiedEvent(temp),
        FileClosedEvent(temp),
        FileModifiedEvent(state),
        FileMovedEvent(str(tmp_path / ".agentdoc" / ".agentdoc-tmp-9"), state),
        DirModifiedEvent(str(tmp_path)),
    ]
    for event in events:
        handler.dispatch(event)
    assert got == []
    assert roots.asked == []


def test_a_temp_file_renamed_over_a_document_is_the_documents_save(tmp_path: Path) -> None:
    handler, _roots, got = _handler(tmp_path)
    handler.dispatch(
        FileMovedEvent(str(tmp_path / ".agentdoc-tmp-1a2b3c"), str(tmp_path / "chat.md"))
    )
    assert got == [(tmp_path / "chat.md", True)]
