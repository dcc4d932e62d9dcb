"""The Vim and Emacs recipes in the real editors, in batch mode, with the real `agentdoc`.

Each runs `agentdoc run` as a background job the way the recipe's key does, with the replaying
fake `claude`: the reply reaches the buffer, a failure reaches the user's messages, and plain
markdown files are left alone. Documents live outside the system temp dir, where real Vim and
Emacs write in place.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdoc.cli import recipes
from tests.support.fake_claude import FakeClaude

DOC = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\nTell me about lifetimes.\n"
VIM = recipes.locate("vim")
EMACS = recipes.locate("emacs")


def editor_env(fake: FakeClaude, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "AGENTDOC_CONFIG": str(tmp_path / "agentdoc-config.toml"),
        "AGENTDOC_CLAUDE": str(fake.executable),
        **{k: v for k, v in fake.env.items() if k != "PATH"},
    }


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "chat.md").write_text(DOC)
    (folder / "notes.md").write_text("# Notes\n\n## User\n\nnot a session document\n")
    return folder


# -- Vim --------------------------------------------------------------------------------------

needs_vim = pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
WAIT_VIM = (
    "let n = 0 | while ({cond}) && n < 600 | sleep 50m | silent! checktime | let n += 1 | endwhile"
)


def vim(env: dict[str, str], *commands: str) -> int:
    argv = ["vim", "-Nu", "NONE", "-i", "NONE", "-n", "-Es", "-c", f"source {VIM}"]
    for command in commands:
        argv += ["-c", command]
    done = subprocess.run([*argv, "-c", "qa!"], env=env, timeout=120, check=False)
    return done.returncode


def vim_runs_chat(env: dict[str, str], docs: Path, waiting: str, failed: str) -> int:
    """Vim runs chat.md with the recipe's mapping and waits while `waiting` holds; its exit code
    is 1 where `failed` holds then."""
    return vim(
        env,
        f"edit {docs / 'chat.md'}",
        'execute "normal \\\\ar"',
        WAIT_VIM.format(cond=waiting),
        f"if {failed} | cquit | endif",
    )


@needs_vim
def test_vim_runs_the_job_and_reloads_the_reply(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = editor_env(fake_claude("plain_text.ndjson"), tmp_path)
    reply_in_buffer = "search('plain reply from the mock', 'nw') == 0"
    code = vim_runs_chat(env, docs, reply_in_buffer, f"{reply_in_buffer} || &modified")
    assert code == 0
    assert "plain reply from the mock" in (docs / "chat.md").read_text()


@needs_vim
def test_vim_shows_the_error_of_a_failed_run(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = editor_env(fake_claude(None, exit="1", stderr="the model is having a bad day"), tmp_path)
    shown = "execute('messages') !~# 'Error: chat.md turn 1: .*bad day'"
    code = vim_runs_chat(env, docs, shown, shown)
    assert code == 0


@needs_vim
def test_vim_recipe_applies_to_session_documents_only(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = editor_env(fake_claude(None), tmp_path)
    session = "get(b:, 'agentdoc', 0) && maparg('<Leader>ar', 'n') =~# 'Run' && &l:autoread"
    assert vim(env, f"edit {docs / 'chat.md'}", f"if !({session}) | cquit | endif") == 0
    plain = "get(b:, 'agentdoc', 0) || maparg('<Leader>ar', 'n') !=# ''"
    assert vim(env, f"edit {docs / 'notes.md'}", f"if {plain} | cquit | endif") == 0


@needs_vim
def test_vim_saves_a_changed_file_without_asking(docs: Path, tmp_path: Path) -> None:
    """The reply changed the file after Vim read it: :w writes at once, keeping CRLF and BOM."""
    path = docs / "crlf.md"
    path.write_bytes(b"\xef\xbb\xbf" + DOC.replace("\n", "\r\n").encode())
    old = path.stat().st_mtime - 100
    os.utime(path, (old, old))  # so the change below is seen whatever the mtime resolution
    changed = "call writefile(['changed on disk'], expand('%:p'), 'a')"
    code = vim(
        {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
        f"edit {path}",
        changed,
        "normal Goadded in Vim",
        "write",
    )
    assert code == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf---\r\n") and data.endswith(b"added in Vim\r\n")
    assert b"changed on disk" not in data  # the buffer was written as it was


# -- Emacs ------------------------------------------------------------------------------------

needs_emacs = pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")


def emacs(env: dict[str, str], program: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["emacs", "--batch", "-l", str(EMACS), "--eval", program],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_and_wait(path: Path) -> str:
    # Batch Emacs never consumes file-notification events (there is no command loop), and
    # pending events keep it from running process sentinels: revert by polling instead.
    return (
        "(setq auto-revert-use-notify nil)"
        f'(find-file "{path}")'
        "(let ((p (agentdoc-run)) (deadline (+ (float-time) 60)))"
        # The sentinel has run when it has killed the process's output buffer.
        "  (while (and (buffer-live-p (process-buffer p)) (< (float-time) deadline))"
        "    (accept-process-output nil 0.1)))"
    )


@needs_emacs
def test_emacs_runs_the_process_and_reverts_the_reply(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = editor_env(fake_claude("plain_text.ndjson"), tmp_path)
    done = emacs(
        env,
        f"(progn {run_and_wait(docs / 'chat.md')}"
        '  (unless (string-match-p "plain reply from the mock" (buffer-string)) (kill-emacs 5))'
        "  (when (buffer-modified-p) (kill-emacs 6)))",
    )
    assert done.returncode == 0, done.stderr


@needs_emacs
def test_emacs_shows_the_error_of_a_failed_run(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = editor_env(fake_claude(None, exit="1", stderr="the model is having a bad day"), tmp_path)
    done = emacs(env, f"(progn {run_and_wait(docs / 'chat.md')})")
    assert done.returncode == 0, done.stderr
    # Batch Emacs prints the echo area's messages on stderr.
    assert "Error: chat.md turn 1: " in done.stderr and "bad day" in done.stderr


def _has_markdown_mode() -> bool:
    if shutil.which("emacs") is None:
        return False
    probe = subprocess.run(
        ["emacs", "--batch", "--eval", '(kill-emacs (if (locate-library "markdown-mode") 0 1))'],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _has_markdown_mode(), reason="markdown-mode (elpa-markdown-mode) missing")
@pytest.mark.parametrize("mode", ["markdown-mode", "gfm-mode"])
def test_emacs_recipe_in_markdown_modes_applies_to_session_documents_only(
    docs: Path, tmp_path: Path, fake_claude: Callable[..., FakeClaude], mode: str
) -> None:
    env = editor_env(fake_claude(None), tmp_path)
    done = emacs(
        env,
        "(progn (require 'markdown-mode)"
        f'  (find-file "{docs / "chat.md"}") ({mode})'
        "  (unless agentdoc-mode (kill-emacs 4))"
        '  (unless (eq (key-binding (kbd "C-c a r")) (quote agentdoc-run)) (kill-emacs 5))'
        f'  (find-file "{docs / "notes.md"}") ({mode})'
        "  (when agentdoc-mode (kill-emacs 6)))",
    )
    assert done.returncode == 0, done.stderr
