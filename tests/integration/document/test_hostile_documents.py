"""Hostile documents: each is refused with a clear message and left exactly as it was.

The corpus lives in ``tests/hostile/``; what cannot be stored in a repository (a 50 MB file, a
symlink loop, a FIFO, a read-only folder) is made by a small generator here. Every case runs
``agentdoc run`` through ``agentdoc.cli.main`` with a fake ``claude`` that records its calls, and
checks: exit code 1 (a user error), the message on stderr, the file's bytes and mode unchanged,
and that no CLI was started.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agentdoc.cli import main
from agentdoc.document import fileio
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError, DocumentGone
from tests.support.documents import chat_in
from tests.support.fake_claude import FakeClaude, install_as_claude
from tests.support.paths import HOSTILE

GOOD = "---\ntitle: Fine\nagentdoc: {}\n---\n\n# Fine\n\n## User\n\nhello\n"

Maker = Callable[[Path], Path]


def corpus(name: str) -> Maker:
    """Copy a stored hostile document into the test's folder (the corpus is never run on)."""

    def make(folder: Path) -> Path:
        path = folder / name
        shutil.copyfile(HOSTILE / name, path)
        return path

    return make


def fifty_megabytes(folder: Path) -> Path:
    path = folder / "huge.md"
    with path.open("wb") as f:
        f.write(GOOD.encode())
        line = b"Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 16 + b"\n"
        f.write(line * (50 * 1024 * 1024 // len(line)))
    return path


def symlink_loop(folder: Path) -> Path:
    (folder / "loop-a.md").symlink_to("loop-b.md")
    (folder / "loop-b.md").symlink_to("loop-a.md")
    return folder / "loop-a.md"


def folder_named_md(folder: Path) -> Path:
    path = folder / "x.md"
    path.mkdir()
    (path / "inside.txt").write_text("not a document\n")
    return path


def fifo(folder: Path) -> Path:
    path = folder / "pipe.md"
    os.mkfifo(path)
    return path


def device_link(folder: Path) -> Path:
    path = folder / "zero.md"
    path.symlink_to("/dev/zero")
    return path


def read_only_file(folder: Path) -> Path:
    path = folder / "locked.md"
    path.write_text(GOOD)
    path.chmod(0o444)
    return path


def inline(name: str, text: str) -> Maker:
    def make(folder: Path) -> Path:
        path = folder / name
        path.write_text(text)
        return path

    return make


@dataclass(frozen=True)
class Case:
    make: Maker
    message: str
    exit_code: int = 1
    marks: tuple[Any, ...] = field(default=())


CASES: dict[str, Case] = {
    "malformed-yaml": Case(corpus("malformed_yaml.md"), "frontmatter is not valid YAML at line"),
    "tab-indented-yaml": Case(corpus("tab_indented_yaml.md"), "frontmatter is not valid YAML"),
    "agentdoc-is-3": Case(
        corpus("agentdoc_is_a_number.md"), "`agentdoc` in the frontmatter must be a mapping"
    ),
    "agentdoc-is-a-list": Case(corpus("agentdoc_is_a_list.md"), "found a list at line 2"),
    "agentdoc-is-a-string": Case(
        corpus("agentdoc_is_a_string.md"), "`agentdoc` in the frontmatter must be a mapping"
    ),
    "frontmatter-is-a-list": Case(
        corpus("frontmatter_is_a_list.md"), "frontmatter must be a YAML mapping"
    ),
    "duplicate-agentdoc-key": Case(corpus("duplicate_agentdoc_key.md"), "duplicate key"),
    "unclosed-frontmatter": Case(corpus("unclosed_frontmatter.md"), "not a session document"),
    "latin-1": Case(corpus("latin1.md"), "not valid UTF-8 (byte 0xe9 at offset"),
    "utf-16": Case(corpus("utf16.md"), "is UTF-16 text; save it as UTF-8"),
    "binary": Case(corpus("binary_png.md"), "looks like a binary file"),
    "empty": Case(corpus("empty.md"), "not a session document"),
    "50-MB": Case(fifty_megabytes, "MiB is larger than agentdoc handles (8 MiB)"),
    "model-is-a-flag": Case(corpus("model_is_a_flag.md"), "`agentdoc.model` must be a model name"),
    "model-with-spaces": Case(
        corpus("model_with_spaces.md"), "`agentdoc.model` must be a model name"
    ),
    "session-is-a-flag": Case(
        corpus("session_is_a_flag.md"), "`agentdoc.session` must be a session id"
    ),
    "session-with-extra": Case(
        corpus("session_with_extra.md"), "`agentdoc.session` must be a session id"
    ),
    "effort-is-a-flag": Case(corpus("effort_is_a_flag.md"), "`agentdoc.effort`"),
    "unknown-trigger": Case(corpus("unknown_trigger.md"), "`agentdoc.trigger`"),
    "cwd-missing": Case(corpus("cwd_missing.md"), "'no-such-folder' is not a folder"),
    "read-only-file": Case(read_only_file, "the file is read-only"),
    "fifo": Case(fifo, "not a regular file"),
    "link-to-dev-zero": Case(device_link, "not a regular file"),
    "symlink-loop": Case(symlink_loop, "loop"),
    "folder-named-x.md": Case(folder_named_md, "folder"),
    "cwd-root": Case(corpus("cwd_root.md"), "outside"),
    "cwd-parent": Case(corpus("cwd_parent.md"), "outside"),
    "cwd-nul": Case(corpus("cwd_nul.md"), "agentdoc.cwd"),
    "deep-nesting": Case(corpus("deep_nesting.md"), "nested"),
    "billion-laughs": Case(corpus("billion_laughs.md"), "alias"),
}


@pytest.fixture
def claude_log(monkeypatch: pytest.MonkeyPatch, plain_claude: FakeClaude) -> FakeClaude:
    """A plain_claude CLI that answers any turn; none of these documents may ever reach it."""
    install_as_claude(plain_claude, monkeypatch)
    return plain_claude


@dataclass(frozen=True)
class Snapshot:
    """What must not change: a regular file's bytes and mode, or just what the path is."""

    kind: int
    mode: int
    data: bytes | None

    @classmethod
    def of(cls, path: Path) -> Snapshot:
        st = path.lstat()
        regular = stat.S_ISREG(st.st_mode)
        return cls(stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), _bytes(path, regular))


def _bytes(path: Path, regular: bool) -> bytes | None:
    return path.read_bytes() if regular else None


def run_cli(argv: list[str], timeout: float = 60.0) -> int:
    """`main(argv)` on a thread, so a read that blocks (a FIFO) fails the test, not the run."""
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    worker.start()
    worker.join(timeout)
    assert result, f"agentdoc {' '.join(argv)} did not finish within {timeout} s"
    return result[0]


@pytest.mark.parametrize(
    "case",
    [pytest.param(case, id=name, marks=case.marks) for name, case in CASES.items()],
)
def test_hostile_document_is_refused_and_left_alone(
    case: Case, claude_log: FakeClaude, capsys: pytest.CaptureFixture[str], folder: Path
) -> None:
    path = case.make(folder)
    before = Snapshot.of(path)
    listing = sorted(p.name for p in folder.iterdir())

    code = run_cli(["run", str(path)])

    err = capsys.readouterr().err
    assert code == case.exit_code, err
    assert case.message in err
    assert path.name in err, "the message must name the document"
    assert "Traceback" not in err
    assert Snapshot.of(path) == before
    assert added_files(folder, listing) == [], "no file may be added"
    assert claude_log.calls() == []


def added_files(folder: Path, before: list[str]) -> list[str]:
    """Files that appeared in ``folder``; agentdoc's state folder does not count when it holds
    nothing, or only its .gitignore and a status file reporting the error (which editors are
    meant to show)."""
    state = folder / ".agentdoc"
    leftovers = sorted(p.name for p in state.iterdir()) if state.is_dir() else []
    leftovers = [
        name
        for name in leftovers
        if not (name.endswith(".status.json") and '"state": "error"' in (state / name).read_text())
        and name != ".gitignore"  # the state folder keeping itself out of git
    ]
    now = [p.name for p in folder.iterdir() if p != state]
    return sorted(set(now) - set(before)) + [f".agentdoc/{name}" for name in leftovers]


# --- a folder agentdoc cannot write to ---------------------------------------------------------


def writable_document(tmp_path: Path) -> Path:
    return chat_in(tmp_path / "shared", GOOD)


def test_read_only_folder(
    tmp_path: Path, claude_log: FakeClaude, capsys: pytest.CaptureFixture[str]
) -> None:
    path = writable_document(tmp_path)
    path.parent.chmod(0o555)
    try:
        if os.access(path.parent, os.W_OK):
            pytest.skip("running as root: a folder without write permission is still writable")
        before = Snapshot.of(path)
        code = run_cli(["run", str(path)])
        assert code == 1
        assert f"the folder {path.parent} is not writable" in capsys.readouterr().err
        assert Snapshot.of(path) == before
        assert claude_log.calls() == []
    finally:
        path.parent.chmod(0o755)


def test_read_only_folder_simulated(
    tmp_path: Path,
    claude_log: FakeClaude,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Root can write anywhere, so the folder's refusal is simulated where it happens: creating
    # the temp file beside the document.
    path = writable_document(tmp_path)

    def refuse(*, prefix: str, dir: Path) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied", str(Path(dir) / f"{prefix}x"))

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    # Whether the CLI was started at all, not whether it got as far as logging its call before
    # being stopped (that is a race the fake would win or lose).
    started: list[list[str]] = []
    popen = subprocess.Popen

    def recording(args: Any, *rest: Any, **kwargs: Any) -> Any:
        started.append([str(a) for a in args])
        return popen(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", recording)
    before = Snapshot.of(path)
    code = run_cli(["run", str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"the folder {path.parent} is not writable" in err
    assert "Traceback" not in err
    assert Snapshot.of(path) == before
    assert [a for a in started if a[0] == str(claude_log.executable)] == []
    assert claude_log.calls() == []


# --- frontmatter that asks for permissions -----------------------------------------------------

PERMISSION_FLAGS = (
    "--permission-mode",
    "--dangerously-skip-permissions",
    "--allowed-tools",
    "--allowedTools",
    "--add-dir",
    "--disallowed-tools",
    "--tools",
)


def test_permission_keys_in_the_frontmatter_are_ignored(
    tmp_path: Path, claude_log: FakeClaude
) -> None:
    path = tmp_path / "greedy.md"
    shutil.copyfile(HOSTILE / "permission_keys.md", path)
    assert run_cli(["run", str(path)]) == 0
    (call,) = claude_log.calls()
    assert not [a for a in call["argv"] if a.startswith(PERMISSION_FLAGS)], call["argv"]
    assert "bypassPermissions" not in " ".join(call["argv"])
    # The keys are the user's to keep; agentdoc only does not act on them.
    text = path.read_text()
    assert "  permission_mode: bypassPermissions\n" in text
    assert document.parse(text).turns[1].role == "assistant"


# --- a document inside its own folder tree may choose its cwd ----------------------------------


@pytest.mark.parametrize("cwd", ["sub", "sub/deeper", "."])
def test_cwd_inside_the_documents_folder_is_used(
    tmp_path: Path, claude_log: FakeClaude, cwd: str
) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    path = tmp_path / "chat.md"
    path.write_text(GOOD.replace("agentdoc: {}", f"agentdoc: {{cwd: {cwd}}}"))
    assert run_cli(["run", str(path)]) == 0
    (call,) = claude_log.calls()
    assert call["cwd"] == str((tmp_path / cwd).resolve())


def test_cwd_through_a_symlink_out_of_the_tree_is_refused(
    tmp_path: Path, claude_log: FakeClaude
) -> None:
    (tmp_path / "escape").symlink_to("/")
    path = tmp_path / "chat.md"
    path.write_text(GOOD.replace("agentdoc: {}", "agentdoc: {cwd: escape}"))
    assert run_cli(["run", str(path)]) == 1
    assert claude_log.calls() == []


# --- fileio on its own: what the command line's own path checks hide ---------------------------


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (symlink_loop, AgentdocError, "is a loop of symbolic links"),
        (folder_named_md, AgentdocError, "is a folder, not a document"),
        (fifo, AgentdocError, "not a regular file"),
        (device_link, AgentdocError, "not a regular file"),
        (lambda folder: folder / "gone.md", DocumentGone, "the document no longer exists"),
    ],
    ids=["symlink-loop", "folder", "fifo", "dev-zero", "missing"],
)
def test_read_bytes_refuses_what_is_not_a_plain_file(
    tmp_path: Path, make: Maker, error: type[Exception], message: str
) -> None:
    path = make(tmp_path)
    with pytest.raises(error, match=message):
        fileio.read_bytes(path)


def test_a_file_that_grows_past_the_limit_after_the_size_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "grows.md"
    path.write_text(GOOD)
    # As if the file grew between the stat and the read: only the read's own limit is left.
    monkeypatch.setattr(fileio, "_check_readable", lambda _path, _st: None)
    monkeypatch.setattr(fileio, "MAX_DOCUMENT_BYTES", len(GOOD) - 1)
    with pytest.raises(AgentdocError, match="larger than agentdoc handles"):
        fileio.read_bytes(path)
