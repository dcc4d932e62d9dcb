"""A prompt that arrived while the daemon was down: answered at start-up where its writer may be
on another device (a trusted synced folder, a `git: sync` document), once; held elsewhere."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentdoc.daemon import find_daemon, startup
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.watch import tree
from agentdoc.records import Status, now_iso, status, write_status
from tests.support.daemon import DOC, Running, roles
from tests.support.fake_claude import FakeClaude
from tests.support.processes import base_env, watching, write_config
from tests.support.waiting import wait_for

ASKED = DOC + "written on the phone while the server slept\n"


def held_why(path: Path) -> str:
    shown = status.read_status(path)
    return (shown.held or "") if shown is not None and shown.state == "pending" else ""


def state(path: Path) -> str | None:
    shown = status.read_status(path)
    return shown.state if shown is not None else None


def daemon(folder: Path, fake: FakeClaude, *, trusted: bool = True) -> Daemon:
    settings = fake.settings(
        settle_step=0.1, settle_max=1.0, claim_wait=0, trusted=(str(folder),) if trusted else ()
    )
    return Daemon([folder], settings, environ=fake.env, rescan_interval=0.5)


def asked_in(folder: Path) -> Path:
    """chat.md in `folder`, with a prompt written while no daemon ran."""
    doc = folder / "chat.md"
    doc.write_text(ASKED)
    return doc


def held(doc: Path, started: Daemon, why: str, fake: FakeClaude) -> None:
    """Once `started` has walked its folders, `doc`'s prompt is held, its status saying `why`,
    and nothing is sent."""
    with Running(started, discovered=True):
        wait_for(lambda: why in held_why(doc), what="the held status")
    assert fake.calls() == []


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / ".stfolder").mkdir(parents=True)  # Syncthing's marker
    return folder


def test_a_prompt_that_arrived_while_down_is_answered_at_start_in_a_trusted_synced_folder(
    synced: Path, plain_claude: FakeClaude
) -> None:
    doc = asked_in(synced)
    with Running(daemon(synced, plain_claude)):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state(doc) == "idle", what="the turn's end")
    assert [c["stdin"] for c in plain_claude.calls()] == [
        "written on the phone while the server slept"
    ]
    with Running(daemon(synced, plain_claude)) as running:  # started again: nothing is sent twice
        wait_for(running.discovered.is_set, what="start-up")
    assert len(plain_claude.calls()) == 1


def test_a_prompt_whose_turn_already_ran_here_is_not_sent_again(
    synced: Path, plain_claude: FakeClaude
) -> None:
    doc = asked_in(synced)  # say an older version came back, the reply of turn 1 not in it
    write_status(doc, Status(document="chat.md", state="idle", turn=1, updated=now_iso()))
    held(doc, daemon(synced, plain_claude), "already there", plain_claude)


def test_an_untrusted_synced_folder_still_holds_it_until_trusted(
    synced: Path, plain_claude: FakeClaude
) -> None:
    doc = asked_in(synced)
    held(doc, daemon(synced, plain_claude, trusted=False), "does not trust", plain_claude)


def test_an_ordinary_folder_keeps_the_rule_save_it_again(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    doc = asked_in(tmp_path)
    held(doc, daemon(tmp_path, plain_claude), "already there", plain_claude)


@pytest.fixture
def told(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The documents start-up tells of a prompt waiting (told as ever, and listed here)."""
    found: list[Path] = []
    real_tell = startup.tell_unsent

    def tell(path: Path) -> None:
        found.append(path)
        real_tell(path)

    monkeypatch.setattr(startup, "tell_unsent", tell)
    return found


def test_a_prompt_saved_as_the_walk_reaches_it_is_answered_and_never_told_as_waiting(
    tmp_path: Path, plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch, told: list[Path]
) -> None:
    """`agentdoc ask` run as the daemon starts: its prompt lands after the watch began, just
    before the walk reads the file. The save's event answers it; a status saying the prompt
    was already there at start would make `ask` give up on a prompt about to be answered."""
    doc = tmp_path / "chat.md"
    doc.write_text(DOC)
    started = daemon(tmp_path, plain_claude, trusted=False)
    real_one = started.discovery.one

    def asked_meanwhile(path: Path) -> None:
        if path == doc:
            doc.write_text(ASKED)
        real_one(path)

    monkeypatch.setattr(started.discovery, "one", asked_meanwhile)
    with Running(started, discovered=True):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state(doc) == "idle", what="the turn's end")
    assert told == []


def test_a_prompt_handed_over_before_the_watch_began_is_answered(
    tmp_path: Path, plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch, told: list[Path]
) -> None:
    """`agentdoc ask` finds the daemon as soon as it holds its lock, and hands the prompt over
    by saving it: while start-up still glances at the notes, before the watch began, the save
    makes no event. It is answered all the same, and never told as waiting."""
    doc = tmp_path / "chat.md"
    doc.write_text(DOC)
    real_take = tree.Glance.take

    def asked_meanwhile(glance: tree.Glance, *args: Any) -> None:
        assert find_daemon(doc) is not None  # what `agentdoc ask` looks for
        real_take(glance, *args)
        doc.write_text(ASKED)

    monkeypatch.setattr(tree.Glance, "take", asked_meanwhile)
    monkeypatch.setattr(startup, "CLOCK_TICK_NS", 0)  # the save comes just before the watch
    with Running(daemon(tmp_path, plain_claude, trusted=False), discovered=True):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state(doc) == "idle", what="the turn's end")
    assert told == []
    assert [c["stdin"] for c in plain_claude.calls()] == [
        "written on the phone while the server slept"
    ]


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


def test_a_prompt_a_checkout_brought_back_is_not_sent(
    synced: Path, plain_claude: FakeClaude
) -> None:
    doc = synced / "chat.md"
    git(synced, "init", "-q")
    git(synced, "config", "user.email", "t@example.com")
    git(synced, "config", "user.name", "t")
    doc.write_text(ASKED)
    git(synced, "add", "chat.md")
    git(synced, "commit", "-qm", "asked")
    doc.write_text(ASKED + "\n## Assistant\n\nold answer\n\n## User\n\n")
    git(synced, "commit", "-qam", "answered")
    git(synced, "checkout", "-q", "HEAD~1")  # the asked version is back, while no daemon runs
    with Running(daemon(synced, plain_claude), discovered=True):
        wait_for(lambda: "already there" in held_why(doc), what="the held status")
    assert plain_claude.calls() == []


def test_a_git_sync_document_is_answered_at_start(tmp_path: Path, plain_claude: FakeClaude) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    doc = repo / "chat.md"
    doc.write_text(ASKED.replace("agentdoc: {}", "agentdoc: {git: sync}"))
    with Running(daemon(repo, plain_claude)):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    assert len(plain_claude.calls()) == 1


def test_a_reboot_of_the_server_loses_no_prompt_written_meanwhile(
    synced: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    """As processes: a daemon serves the folder, stops (a reboot); the phone's prompt lands while
    it is down; the daemon started again answers it, and a third start sends nothing more."""
    config = write_config(
        tmp_path / "config.toml", settle_step=0.1, settle_max=1.0, claim_wait=0, warm_sessions=0
    )
    with config.open("a") as toml:
        toml.write(f"trusted = [{json.dumps(str(synced))}]\n")
    environ = base_env(
        tmp_path / "home",
        **plain_claude.env,
        AGENTDOC_CLAUDE=str(plain_claude.executable),
        AGENTDOC_CONFIG=str(config),
        AGENTDOC_STATE_DIR=os.environ["AGENTDOC_STATE_DIR"],
    )
    doc = synced / "chat.md"
    doc.write_text(DOC)
    with watching(synced, environ, tmp_path / "first.log") as first:
        first.send(signal.SIGTERM)
        assert first.wait() == 0
    doc.write_text(ASKED)  # the phone's save, delivered while the server is down
    with watching(synced, environ, tmp_path / "second.log"):
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state(doc) == "idle", what="the turn's end")
    with watching(synced, environ, tmp_path / "third.log") as third:
        assert "unsent prompt" not in third.log()
    assert [c["stdin"] for c in plain_claude.calls()] == [
        "written on the phone while the server slept"
    ]
    assert not (synced / ".agentdoc").exists()  # this machine's state stayed out of the sync
