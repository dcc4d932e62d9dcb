"""A real headless Neovim edits and saves the document while the daemon streams a reply into it.

Neovim runs with the shipped recipe (`agentdoc/editors/agentdoc.vim`: `autoread`, a `checktime`
timer, and a `FileChangedShell` handler that keeps a modified buffer instead of asking), so it
reloads the daemon's writes as they land; the test drives it over its RPC socket with
`nvim --server SOCK --remote-send` (keys, as typed) and `--remote-expr`. Neovim 0.7 prints a
`--remote-expr` result in the server rather than the client, so expressions write their JSON
value to a file instead. The daemon runs in this process with the replaying fake `claude`,
held at a gate so the test decides when the reply may finish.

The last test replays, deterministically and without Neovim, the race the real editor hit:
its in-place save landing while the daemon writes the reply.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentdoc.daemon.service import Daemon
from agentdoc.document import parser as document
from agentdoc.document.fileio import TEMP_PREFIX
from tests.support.daemon import Running, make_daemon
from tests.support.documents import chat_in
from tests.support.editor_saves import in_place
from tests.support.fake_claude import FakeClaude
from tests.support.neovim import HeadlessNvim, find_nvim, quit_at_the_end
from tests.support.paths import PACKAGE
from tests.support.processes import roles, state_of
from tests.support.waiting import wait_for

DOC = """---
agentdoc: {}
---

# Chat

## User

"""
PROMPT = "What does Neovim do when a file changes on disk?"
NOTE = "Note typed in Neovim near the top."
FOLLOW_UP = "Follow-up typed in Neovim."
GATE_AT = "300"  # the fake claude stops before this transcript line until the gate exists
LAST_BEFORE_GATE = "w295 "  # the last word it prints before the gate
RECIPE = PACKAGE / "editors" / "agentdoc.vim"


class Neovim(HeadlessNvim):
    """A headless Neovim with `path` open and the shipped Vim/Neovim recipe loaded."""

    def __init__(self, nvim: str, path: Path, scratch: Path) -> None:
        state = scratch / "state"
        for sub in ("backup", "undo", "home"):
            (state / sub).mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": str(state / "home"),
            "XDG_CONFIG_HOME": str(state / "config"),
            "XDG_DATA_HOME": str(state / "data"),
            "XDG_STATE_HOME": str(state / "state"),
            "XDG_CACHE_HOME": str(state / "cache"),
        }
        # Backups out of the document's folder (and out of /tmp); no swap file, no shada.
        early = f"set backupdir={state / 'backup'}// undodir={state / 'undo'}//"
        setup = ["--cmd", early, "-c", f"source {RECIPE}", "-c", "set paste"]
        super().__init__(nvim, path, scratch, env, setup)

    def confirm(self, saved: Callable[[], bool], what: str) -> None:
        """Answer "y" until `saved` holds.

        Vim and Neovim ask "The file has been changed since reading it!!! Do you really want
        to write to it (y/n)?" even for `:w!`, and read the answer straight from the input,
        so keys sent along with the `:w!` do not answer it. A "y" sent when no question is
        asked starts a yank that the `<Esc>` cancels.
        """
        for _ in range(20):
            with contextlib.suppress(AssertionError):
                wait_for(saved, what, 0.3)
                return
            self.type("y<Esc>")
        wait_for(saved, what, 1.0)


@pytest.fixture
def neovim(tmp_path: Path) -> Iterator[Callable[[Path], Neovim]]:
    nvim = find_nvim()

    def start(path: Path) -> Neovim:
        scratch = tmp_path / "nvim"
        scratch.mkdir()
        return Neovim(nvim, path, scratch)

    yield from quit_at_the_end(start)


@pytest.fixture
def doc(folder: Path) -> Path:
    """The document the tests edit, with no prompt yet, in the folder the daemon serves."""
    return chat_in(folder, DOC)


def test_neovim_types_and_saves_while_a_reply_streams(
    fake_claude: Callable[..., FakeClaude],
    neovim: Callable[[Path], Neovim],
    gate: Path,
    doc: Path,
) -> None:
    fake = fake_claude("long_stream.ndjson", gate=str(gate), gate_at=GATE_AT)
    with Running(make_daemon(doc.parent, fake)):
        editor = neovim(doc)
        editor.type(f"<Esc>Go{PROMPT}<Esc>:w<CR>")
        # The reply streams up to the gate and Neovim reloads it: the disk is quiet now, so
        # the save below cannot race a write (that would make Neovim ask before writing).
        wait_for(lambda: LAST_BEFORE_GATE in doc.read_text(), what="the reply up to the gate")
        wait_for(lambda: editor.shows(doc), what="Neovim to reload the streaming reply")
        assert "agentdoc:reply" in editor.buffer()

        editor.type(
            f"<Esc>gg/^# Chat<CR>o<CR>{NOTE}<Esc>Go<CR>## User<CR><CR>{FOLLOW_UP}<Esc>:w<CR>"
        )
        wait_for(lambda: FOLLOW_UP in doc.read_text(), what="Neovim's save")
        assert state_of(doc) == "streaming" and len(fake.calls()) == 1

        gate.touch()
        wait_for(lambda: len(fake.calls()) == 2, what="the follow-up to be sent")
        wait_for(lambda: len(roles(doc)) == 5 and state_of(doc) == "idle", what="both replies")
        wait_for(lambda: editor.shows(doc), what="Neovim to show the final file")

    text = doc.read_text(encoding="utf-8")
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 2 + ["user"]
    assert parsed.turns[0].content.strip() == PROMPT
    assert parsed.turns[2].content.strip() == FOLLOW_UP
    for reply in (parsed.turns[1], parsed.turns[3]):
        assert reply.content.count("w0 ") == 1 and reply.content.count("w1999.") == 1
        assert all(f"w{i} " in reply.content or f"w{i}." in reply.content for i in range(2000))
    assert text.count(NOTE) == 1 and text.index(NOTE) < text.index("## User")
    assert "agentdoc:reply" not in text and "agentdoc:end" not in text
    first, second = (call["stdin"] for call in fake.calls())
    assert first == PROMPT and FOLLOW_UP in second


def test_a_forced_save_of_a_stale_buffer_mid_stream_is_merged(
    fake_claude: Callable[..., FakeClaude],
    neovim: Callable[[Path], Neovim],
    gate: Path,
    doc: Path,
) -> None:
    """The recipe's promise: type while the reply streams, then `:w!` the unreloaded buffer."""
    fake = fake_claude("long_stream.ndjson", gate=str(gate), gate_at="1800", delay="0.002")
    # One write a second, so the save lands between two of them: a save that lands *during*
    # one is the race in the test below.

    settings = fake.settings(settle_step=0.1, settle_max=1.0, flush_interval=1.0)
    daemon = Daemon([doc.parent], settings, environ=fake.env, rescan_interval=0.5)
    with Running(daemon):
        editor = neovim(doc)
        editor.type(f"<Esc>Go{PROMPT}<Esc>:w<CR>")
        wait_for(lambda: "w10 " in doc.read_text(), what="the reply to stream")
        wait_for(lambda: editor.shows(doc), what="Neovim to reload the streaming reply")
        editor.type(f"<Esc>gg/^# Chat<CR>o<CR>{NOTE}<Esc>")  # typed, not saved yet
        wait_for(editor.modified, what="Neovim to have the note in its buffer")
        loaded = doc.read_text()
        # The daemon writes again; the modified buffer is kept as it was (the recipe's
        # FileChangedShell handler), so the save below is of a stale copy of the reply.
        wait_for(lambda: doc.read_text() != loaded, what="the next write of the reply")
        editor.type("<Esc>:w<CR>")
        # The recipe writes session documents itself, so even this stale buffer is saved at
        # once, without Neovim asking whether to overwrite the changed file.
        wait_for(lambda: NOTE in doc.read_text(), what="Neovim's save")
        assert "Do you really want to write to it" not in editor.log()
        gate.touch()
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state_of(doc) == "idle", what="the turn to end")
        wait_for(lambda: editor.shows(doc), what="Neovim to show the final file")

    text = doc.read_text(encoding="utf-8")
    reply = document.parse(text).turns[1].content
    assert all(reply.count(f"w{i} ") + reply.count(f"w{i}.") == 1 for i in range(2000))
    assert text.count(NOTE) == 1 and text.index(NOTE) < text.index("## User")
    assert len(fake.calls()) == 1


def _is_temp_beside(fd: int, doc: Path) -> bool:
    with contextlib.suppress(OSError):
        target = Path(os.readlink(f"/proc/self/fd/{fd}"))
        return target.parent == doc.parent and target.name.startswith(TEMP_PREFIX)
    return False


def test_a_save_landing_between_the_check_and_the_rename_is_not_overwritten(
    fake_claude: Callable[..., FakeClaude],
    gate: Path,
    monkeypatch: pytest.MonkeyPatch,
    doc: Path,
) -> None:
    fake = fake_claude("long_stream.ndjson", gate=str(gate), gate_at=GATE_AT)
    armed, fired = threading.Event(), threading.Event()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if armed.is_set() and not fired.is_set() and _is_temp_beside(fd, doc):
            fired.set()
            # What Neovim does on `:w`: truncate the document and write its buffer in place.
            text = doc.read_text(encoding="utf-8")
            in_place(doc, text.replace("# Chat\n", f"# Chat\n\n{NOTE}\n", 1).encode())
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with Running(make_daemon(doc.parent, fake)):
        doc.write_text(DOC + PROMPT + "\n")
        wait_for(lambda: LAST_BEFORE_GATE in doc.read_text(), what="the reply up to the gate")
        armed.set()
        gate.touch()
        wait_for(fired.is_set, what="the next write of the reply")
        wait_for(lambda: state_of(doc) == "idle", what="the turn to end")

    text = doc.read_text(encoding="utf-8")
    assert "w1999." in text
    assert NOTE in text
