"""The watch daemon with a real watchdog observer and a replaying fake `claude`."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from watchdog.observers.api import BaseObserver

from agentdoc.cli import cli
from agentdoc.daemon import service
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.watch import observing, tree, watcher
from agentdoc.errors import AgentdocError
from agentdoc.records import status
from tests.support.daemon import (
    DOC,
    Running,
    make_daemon,
    roles,
    save_and_wait_streaming,
    state_of,
)
from tests.support.editor_saves import STRATEGIES, autosave_burst, save
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_one_turn_per_logical_save_whatever_the_editor(
    folder: Path, strategy: str, doc: Path, plain_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, plain_claude)):
        save(doc, DOC + "hi there\n", strategy)
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        # Editor artefacts and our own writes trigger nothing; a second real save does.
        (folder / ".chat.md.swp").write_text("swap")
        (folder / "4913").write_text("")
        save(doc, doc.read_text() + "second prompt\n", strategy)
        wait_for(lambda: len(roles(doc)) == 5, what="the second reply")
        wait_for(lambda: state_of(doc) == "idle", what="status idle")
    assert len(plain_claude.calls()) == 2


def test_autosave_burst_sends_once(folder: Path, doc: Path, plain_claude: FakeClaude) -> None:
    """With `settle_guard` as long as the quiet step (the setting for an editor that autosaves
    in bursts under `trigger: save`), a burst is one save: its last version is sent. The burst
    begins as soon as the daemon is ready: start-up's look at the file, which may come in the
    middle of it, must not take its first version for a save either."""
    settings = plain_claude.settings(settle_step=0.5, settle_max=2.0, settle_guard=0.5)
    with Running(Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0.5)):
        autosave_burst(doc, [DOC + "h", DOC + "hi", DOC + "hi th", DOC + "hi there\n"], 0.03)
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    calls = plain_claude.calls()
    assert len(calls) == 1 and calls[0]["stdin"] == "hi there"


@pytest.mark.parametrize("strategy", ["in_place", "vim_rename", "jetbrains"])
def test_a_completed_save_is_sent_without_waiting_for_quiet(
    folder: Path, strategy: str, doc: Path, plain_claude: FakeClaude
) -> None:
    """The quiet step is a minute here: the turn can only start because the save was seen
    complete (close-write, or a rename into place)."""
    settings = plain_claude.settings(settle_step=60.0, settle_max=120.0)
    with Running(Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0.5)):
        save(doc, DOC + "hi there\n", strategy)
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply", timeout=20)
    assert [call["stdin"] for call in plain_claude.calls()] == ["hi there"]


def test_prompt_saved_while_streaming_is_queued_then_sent(
    folder: Path, gate: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, gated_claude)):
        save_and_wait_streaming(doc, DOC + "first\n")
        doc.write_text(doc.read_text() + "\n## User\n\nsecond\n")
        wait_for(lambda: len(gated_claude.calls()) == 1 and "second" in doc.read_text())
        gate.touch()
        wait_for(lambda: len(gated_claude.calls()) == 2, what="the queued prompt")
        wait_for(lambda: roles(doc) == ["user", "assistant"] * 2 + ["user"], what="two replies")
    assert gated_claude.calls()[0]["stdin"] == "first"
    assert gated_claude.calls()[1]["stdin"].endswith("second")


def empty_docs(folder: Path, *names: str) -> list[Path]:
    """New documents NAME.md in `folder`, no prompt in them yet."""
    docs = [folder / f"{name}.md" for name in names]
    for doc in docs:
        doc.write_text(DOC)
    return docs


def answered(*docs: Path) -> None:
    """Wait for one reply in each of `docs`."""
    for doc in docs:
        wait_for(lambda d=doc: roles(d) == ["user", "assistant", "user"])  # type: ignore[misc]


def test_two_documents_stream_at_once_without_cross_talk(
    folder: Path, gate: Path, gated_claude: FakeClaude
) -> None:
    a, b = empty_docs(folder, "a", "b")
    with Running(make_daemon(folder, gated_claude)):
        a.write_text(DOC + "prompt for a\n")
        b.write_text(DOC + "prompt for b\n")
        wait_for(lambda: "w10 " in a.read_text() and "w10 " in b.read_text(), what="both")
        gate.touch()
        answered(a, b)
    assert "prompt for b" not in a.read_text() and "prompt for a" not in b.read_text()
    assert sorted(c["stdin"] for c in gated_claude.calls()) == ["prompt for a", "prompt for b"]


@contextlib.contextmanager
def one_turn_at_a_time(folder: Path, fake: FakeClaude, first: Path) -> Iterator[None]:
    """The daemon capped at one turn at a time, `first` already streaming its reply."""
    settings = fake.settings(settle_step=0.1, settle_max=1.0, max_concurrent_turns=1)
    with Running(Daemon([folder], settings, environ=fake.env, rescan_interval=0.5)):
        first.write_text(DOC + f"prompt for {first.stem}\n")
        wait_for(lambda: "w10 " in first.read_text(), what=f"{first.stem} streaming")
        yield


def test_turns_beyond_the_configured_cap_wait_and_are_told_so(
    folder: Path, gate: Path, gated_claude: FakeClaude
) -> None:
    a, b = empty_docs(folder, "a", "b")
    with one_turn_at_a_time(folder, gated_claude, a):
        b.write_text(DOC + "prompt for b\n")
        wait_for(lambda: state_of(b) == "queued", what="b told it waits")
        assert len(gated_claude.calls()) == 1
        gate.touch()
        answered(a, b)
    assert [c["stdin"] for c in gated_claude.calls()] == ["prompt for a", "prompt for b"]


def test_queued_turns_go_in_the_order_saved_and_each_is_told_its_place(
    folder: Path, gated_claude: FakeClaude, gate: Path
) -> None:
    """Not in the order the daemon first saw the documents: c is saved before b."""
    a, b, c = empty_docs(folder, "a", "b", "c")
    with one_turn_at_a_time(folder, gated_claude, a):
        c.write_text(DOC + "prompt for c\n")
        wait_for(lambda: state_of(c) == "queued", what="c told it waits")
        b.write_text(DOC + "prompt for b\n")
        wait_for(lambda: state_of(b) == "queued", what="b told it waits")
        places = [status.read_status(doc) for doc in (c, b)]
        assert [found.place if found else None for found in places] == [1, 2]
        assert "2nd in line" in (places[1].describe() if places[1] else "")
        gate.touch()
        wait_for(lambda: roles(c) == ["user", "assistant", "user"], what="c answered")
        found = status.read_status(b)
        assert found is not None and (found.state != "queued" or found.place == 1), found
        wait_for(lambda: roles(b) == ["user", "assistant", "user"], what="b answered")
    calls = gated_claude.calls()
    assert [c["stdin"] for c in calls] == ["prompt for a", "prompt for c", "prompt for b"]


def test_pending_prompts_at_startup_wait_for_a_save_unless_asked(
    folder: Path, plain_claude: FakeClaude
) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC + "left pending\n")
    other = folder / "other.md"
    other.write_text(DOC)
    with Running(make_daemon(folder, plain_claude)):
        other.write_text(DOC + "fresh prompt\n")
        wait_for(lambda: roles(other) == ["user", "assistant", "user"])
        assert roles(doc) == ["user"] and len(plain_claude.calls()) == 1
    with Running(make_daemon(folder, plain_claude, send_pending=True)):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="--send-pending")


def test_marker_trigger_sends_only_on_the_marker_and_removes_it(
    folder: Path, plain_claude: FakeClaude
) -> None:
    doc = folder / "chat.md"
    marked = DOC.replace("agentdoc: {}", "agentdoc:\n  trigger: marker")
    doc.write_text(marked)
    with Running(make_daemon(folder, plain_claude)):
        doc.write_text(marked + "still typing\n")
        other = folder / "probe.md"  # a full settle cycle on another file: the daemon is caught up
        other.write_text(DOC + "probe\n")
        wait_for(lambda: roles(other) == ["user", "assistant", "user"])
        assert roles(doc) == ["user"]
        doc.write_text(marked + "still typing\nnow done\n/send\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the marker")
    assert "/send" not in doc.read_text()
    stdins = [c["stdin"] for c in plain_claude.calls()]
    assert "still typing\nnow done" in stdins


def test_cancel_command_stops_the_turn_and_keeps_partial_text(
    folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, gated_claude)):
        save_and_wait_streaming(doc, DOC + "first\n")
        wait_for(lambda: state_of(doc) == "streaming", what="status streaming")
        # `cancel` itself fails unless the turn stops within its --wait (5 s).
        result = CliRunner().invoke(cli, ["cancel", str(doc)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        wait_for(lambda: "agentdoc:reply" not in doc.read_text(), what="closed region")
    text = doc.read_text()
    assert "interrupted" in text and "w10 " in text
    assert roles(doc) == ["user", "assistant", "user"]


def test_deleting_the_streaming_block_cancels_the_turn(
    folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    daemon = make_daemon(folder, gated_claude)
    with Running(daemon):
        save_and_wait_streaming(doc, DOC + "first\n")
        doc.write_text(DOC + "first\n")  # the block deleted, nothing else changed
        wait_for(lambda: daemon.turns.running() == 0, what="the turn to stop")
        assert len(gated_claude.calls()) == 1  # the save that deleted it did not send it again
    assert doc.read_text() == DOC + "first\n"


def test_a_stale_buffer_saved_over_the_reply_gets_the_reply_back(
    folder: Path, gate: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, gated_claude)):
        save_and_wait_streaming(doc, DOC + "first\n")
        # An editor that never reloaded saves its copy: the prompt plus a note typed since.
        doc.write_text(DOC.replace("# Chat\n", "# Chat\n\nA note typed meanwhile.\n") + "first\n")
        wait_for(lambda: "w10 " in doc.read_text(), what="the reply put back")
        gate.touch()
        wait_for(lambda: "agentdoc:reply" not in doc.read_text(), what="the end of the turn")
    text = doc.read_text()
    assert "A note typed meanwhile." in text
    assert text.count("w1999") == 1 and "w0 w1 w2" in text
    assert roles(doc) == ["user", "assistant", "user"]


def test_a_deleted_document_does_not_stop_the_others(
    folder: Path, gate: Path, gated_claude: FakeClaude
) -> None:
    doomed, other = folder / "doomed.md", folder / "other.md"
    doomed.write_text(DOC)
    other.write_text(DOC)
    daemon = make_daemon(folder, gated_claude)
    with Running(daemon):
        doomed.write_text(DOC + "going away\n")
        wait_for(lambda: "w10 " in doomed.read_text(), what="streaming")
        doomed.unlink()
        gate.touch()
        wait_for(lambda: daemon.turns.running() == 0, what="the turn to end")
        # A deleted document leaves nothing in `.agentdoc/` that `agentdoc status` would list.
        wait_for(lambda: not status.status_path(doomed).exists(), what="its status removed")
        other.write_text(DOC + "still served?\n")
        wait_for(lambda: roles(other) == ["user", "assistant", "user"], what="the other doc")


def test_a_second_daemon_on_the_same_tree_is_refused(
    folder: Path, plain_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, plain_claude)):
        for root in (folder, folder.parent):
            with pytest.raises(AgentdocError, match="already watches"):
                make_daemon(root, plain_claude).run(threading.Event())
        sub = folder / "sub"
        sub.mkdir()
        with pytest.raises(AgentdocError, match="already watches"):
            make_daemon(sub, plain_claude).run(threading.Event())


def test_crash_leftovers_are_marked_interrupted_and_not_resent(
    folder: Path, plain_claude: FakeClaude
) -> None:
    doc = folder / "chat.md"
    doc.write_text(
        DOC
        + "asked before the crash\n\n## Assistant\n\n"
        + "<!-- agentdoc:reply 0badc0de (streaming; text you type between these markers"
        + " is kept) -->\n"
        + "half an ans\n<!-- agentdoc:end 0badc0de -->\n"
    )
    with Running(make_daemon(folder, plain_claude, send_pending=True)):
        wait_for(lambda: "agentdoc:reply" not in doc.read_text(), what="recovery")
    text = doc.read_text()
    assert "half an ans" in text and "interrupted" in text
    assert roles(doc) == ["user", "assistant", "user"]
    assert plain_claude.calls() == []


def test_saves_are_served_while_the_first_walk_goes_on(
    folder: Path, monkeypatch: pytest.MonkeyPatch, plain_claude: FakeClaude
) -> None:
    from agentdoc.daemon.watch import tree

    slow = folder / "archive"
    slow.mkdir()
    (slow / "old.md").write_text(DOC + "an old pending prompt\n")
    release = threading.Event()
    real_list = tree.list_folder

    def slow_list(path: str) -> tree.Folder | None:
        if path == str(slow):
            release.wait(30)
        return real_list(path)

    monkeypatch.setattr(tree, "list_folder", slow_list)
    doc = folder / "chat.md"
    doc.write_text(DOC)
    try:
        with Running(make_daemon(folder, plain_claude)):
            save(doc, DOC + "hi there\n", "in_place")
            wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
            assert not release.is_set()
            release.set()
            wait_for(lambda: state_of(doc) == "idle", what="status idle")
    finally:
        release.set()
    # Found by the walk, and (without --send-pending) left alone.
    assert [c["stdin"] for c in plain_claude.calls()] == ["hi there"]


def test_an_idle_daemon_sleeps_on_its_queues_and_still_stops_at_once(
    folder: Path, plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With nothing to do, the loop and the watch's feed wait on their queues (here up to an
    # hour, and no rescan); setting the daemon's `Stop` wakes both.
    monkeypatch.setattr(service, "IDLE_TICK", 3600.0)
    monkeypatch.setattr(watcher, "TICK", 3600.0)
    settings = plain_claude.settings(settle_step=0.1, settle_max=1.0)
    daemon = Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0)
    with Running(daemon, discovered=True):
        pass  # leaving the block sets the Stop, and fails unless the daemon's thread ends


def test_start_up_reads_each_plain_note_once_before_the_watch_begins(
    tmp_path: Path, plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read while observed, each note's read comes back as an open and a close for the watch's
    threads to build and drop; a 10,000-note vault's start-up spent more CPU on those than on
    the reads. And a note made a session document after that read is found all the same."""
    folder = tmp_path / "notes"
    folder.mkdir()
    plain = [folder / f"note{n}.md" for n in range(5)]
    for note in plain:
        note.write_text("---\ntitle: a note\n---\n\n# Note\n")
    chat = folder / "chat.md"
    chat.write_text(DOC)
    turned = folder / "turned.md"  # made a session document just after the glance
    turned.write_text(DOC.replace("agentdoc: {}", "title: notyet"))
    monkeypatch.setattr(tree, "FINE_RACY_NS", 0)  # written just now, yet settled
    happened: list[str | Path] = []
    read_start = tree._starts_as_session

    def counted(path: Path) -> bool:
        happened.append(path)
        return read_start(path)

    monkeypatch.setattr(tree, "_starts_as_session", counted)
    real_take, real_observer = tree.Glance.take, observing.start_observer

    def glance_then_edit(glance: tree.Glance, *args: Any) -> None:
        real_take(glance, *args)
        st = turned.stat()
        turned.write_text(DOC.replace("agentdoc: {}", "agentdoc: {} "))  # the same size
        os.utime(turned, ns=(st.st_atime_ns, st.st_mtime_ns))

    def observer(*args: Any) -> BaseObserver:
        happened.append("observed")
        return real_observer(*args)

    monkeypatch.setattr(tree.Glance, "take", glance_then_edit)
    monkeypatch.setattr(watcher, "start_observer", observer)
    with Running(make_daemon(folder, plain_claude), discovered=True) as running:
        known = set(running.documents())
    assert known == {chat, turned}
    observed = happened.index("observed")
    assert sorted(map(str, happened[:observed])) == sorted(map(str, [*plain, chat, turned]))
    assert sorted(map(str, happened[observed + 1 :])) == sorted(map(str, [chat, turned]))


def test_start_up_discovery_does_not_wait_for_the_loops_tick(
    folder: Path, plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The walk wakes the loop when it finds the first file and when it is done: with ticks an
    # hour apart, start-up still ends as soon as the walk and its reads do.
    (folder / "chat.md").write_text(DOC)
    monkeypatch.setattr(service, "BUSY_TICK", 3600.0)
    monkeypatch.setattr(service, "IDLE_TICK", 3600.0)
    # The walk begins once the loop waits for its first event.
    waiting = threading.Event()
    step, build = Daemon._step, tree.build

    def first_wait(self: Daemon, timeout: float) -> None:
        waiting.set()
        step(self, timeout)

    def walk_later(*args: Any) -> Any:
        assert waiting.wait(10)
        return build(*args)

    monkeypatch.setattr(Daemon, "_step", first_wait)
    monkeypatch.setattr(watcher, "build", walk_later)
    settings = plain_claude.settings(settle_step=0.1, settle_max=1.0)
    daemon = Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0)
    with Running(daemon, discovered=True) as running:
        assert running.documents() == [folder / "chat.md"]
