"""The daemon as a process on a vault of 10,000 notes, with hostile entries among them.

Start-up on a real-sized tree, a prompt answered there, and a `git checkout` that rewrites
hundreds of notes with nothing sent and nothing written. The tree (notes with frontmatter and
headings, nested folders, non-ASCII names, three session documents, FIFOs, a socket, a folder
and a loop of links named *.md, a link to /dev/zero, a sparse 300 MB file) is made once per
test session.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_claude import FakeClaude
from tests.support.processes import base_env, roles, watching, write_config
from tests.support.waiting import wait_for

NOTES = 10_000
REWRITTEN = 400
SESSIONS = ("chat.md", "Projekte/plan-été.md", "日記/会話.md")
SESSION = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\n"
FOLDERS = ("notes", "Projekte", "日記", "recettes-été", "archive/2019", "archive/2020/q3")


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    # No automatic gc: after the 10,000-note commit it would go on in the background,
    # deleting .git/objects folders while the daemon starts watching them.
    done = subprocess.run(
        ["git", "-c", "core.quotepath=off", "-c", "gc.auto=0", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def _note(n: int, version: str) -> str:
    return (
        f"---\ntitle: Note {n}\ntags: [vault, t{n % 17}]\naliases: [n{n}]\n---\n\n"
        f"# Note {n} {version}\n\nText with a [[link-{n + 1}]] and `code`.\n\n"
        "## Section\n\n- one\n- two\n\n## User\n\nnot a prompt: no agentdoc key\n"
    )


def _note_path(root: Path, n: int) -> Path:
    name = f"größe-ñ-{n}.md" if n % 7 == 0 else f"note-{n}.md"
    return root / FOLDERS[n % len(FOLDERS)] / f"sub{n % 23}" / name


def _hostile(odd: Path) -> socket.socket:
    odd.mkdir()
    os.mkfifo(odd / "pipe.md")
    (odd / "folder.md").mkdir()
    (odd / "loop.md").symlink_to("loop.md")
    (odd / "zero.md").symlink_to("/dev/zero")
    with (odd / "sparse.md").open("wb") as f:
        f.truncate(300 * 1024 * 1024)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(odd / "sock.md"))
    return listener


@pytest.fixture(scope="session")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The tree, committed on `main`, and a branch `rewrite` that changes REWRITTEN notes."""
    root = tmp_path_factory.mktemp("vault")
    for n in range(NOTES):
        path = _note_path(root, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_note(n, "v1"), encoding="utf-8")
    for name in SESSIONS:
        (root / name).write_text(SESSION, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    (root / ".git" / "info" / "exclude").write_text("odd/\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "v1")
    _git(root, "checkout", "-q", "-b", "rewrite")
    for n in range(0, NOTES, NOTES // REWRITTEN):
        _note_path(root, n).write_text(_note(n, "v2"), encoding="utf-8")
    _git(root, "commit", "-q", "-am", "v2")
    _git(root, "checkout", "-q", "main")
    listener = _hostile(root / "odd")
    try:
        yield root
    finally:
        listener.close()


@pytest.mark.slow
def test_a_vault_of_ten_thousand_notes(
    vault: Path, tmp_path: Path, plain_claude: FakeClaude
) -> None:
    config = write_config(tmp_path / "config.toml", settle_step=0.1, settle_max=1.0)
    env = base_env(
        tmp_path / "home",
        **plain_claude.env,
        AGENTDOC_CLAUDE=str(plain_claude.executable),
        AGENTDOC_CONFIG=str(config),
    )
    chat, plan, diary = (vault / name for name in SESSIONS)
    started = time.monotonic()
    with watching(vault, env, tmp_path / "watch.log", ready_timeout=120) as daemon:
        print(f"\n  start-up on {NOTES} notes: {time.monotonic() - started:.1f} s until ready")
        assert f"start-up done: {len(SESSIONS)} session documents" in daemon.log()

        chat.write_text(SESSION + "hello from a big vault\n", encoding="utf-8")
        wait_for(lambda: roles(chat) == ["user", "assistant", "user"], "the reply", 60)

        _git(vault, "checkout", "-q", "rewrite")  # rewrites REWRITTEN notes at once
        # Saves are handled in order: once this one is answered, the checkout's changes have
        # been looked at too.
        plan.write_text(SESSION + "and one more\n", encoding="utf-8")
        wait_for(lambda: roles(plan) == ["user", "assistant", "user"], "the second reply", 60)
        assert len(plain_claude.calls()) == 2  # the checkout sent nothing
        changed = _git(vault, "status", "--porcelain").splitlines()
        # Nothing written but the two replies: no note touched, the state folder ignored.
        assert sorted(changed) == sorted(f" M {name}" for name in SESSIONS[:2])
        assert roles(diary) == ["user"]
        log = daemon.log()
        assert "Traceback" not in log and "unexpected error" not in log
    _git(vault, "checkout", "-q", "--", *SESSIONS[:2])
    _git(vault, "checkout", "-q", "main")
