"""The shipped Neovim plugin, in a real headless Neovim: run, reply in the buffer, cancel, errors.

Neovim loads the plugin from its folder in the package (as a plugin manager would put it on
'runtimepath') and runs the installed `agentdoc` command as a job, with the replaying fake
`claude`. `vim.notify` is replaced by a recorder so the test can read what the user was shown.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdoc.cli import recipes
from agentdoc.localstate import state_folder
from tests.support.documents import chat_in
from tests.support.fake_claude import FakeClaude
from tests.support.neovim import HeadlessNvim, find_nvim, quit_at_the_end
from tests.support.paths import REPO_ROOT
from tests.support.processes import state_of
from tests.support.waiting import wait_for

PLUGIN = recipes.locate("neovim")
DOC = "---\nagentdoc: {}\n---\n\n# Chat\n\n## User\n\nTell me about lifetimes.\n"
RECORD_NOTIFY = (
    "lua vim.g.notes = {}; vim.notify = function(msg, level) "
    "local notes = vim.g.notes; table.insert(notes, {msg = msg, level = level}); "
    "vim.g.notes = notes end"
)


DONE = {"msg": "agentdoc: the reply to turn 1 in chat.md is done", "level": 2}


class Nvim(HeadlessNvim):
    """Neovim with the plugin on its 'runtimepath' and `vim.notify` recorded."""

    def __init__(
        self, nvim: str, path: Path, scratch: Path, env: dict[str, str], lua: str = ""
    ) -> None:
        setup = ["--cmd", f"set rtp^={PLUGIN}", "-c", RECORD_NOTIFY]
        if lua:  # the user's init.lua: runs before the document is opened
            setup[2:2] = ["--cmd", f"lua {lua}"]
        super().__init__(nvim, path, scratch, env, setup)

    def command(self, command: str) -> None:
        self.type(f"<Esc>:{command}<CR>")

    def notes(self) -> list[dict[str, Any]]:
        return list(self.expr("g:notes"))


@pytest.fixture
def start_nvim(tmp_path: Path) -> Iterator[Callable[..., Nvim]]:
    nvim = find_nvim()

    def start(path: Path, fake: FakeClaude, lua: str = "") -> Nvim:
        scratch = tmp_path / "nvim"
        scratch.mkdir()
        home = scratch / "home"
        home.mkdir()
        env = {
            # The agentdoc under test first on PATH, as `pipx install` would put it.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            # ...and running this checkout's code, wherever the package is installed from.
            "PYTHONPATH": str(REPO_ROOT),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(scratch / "config"),
            "XDG_DATA_HOME": str(scratch / "data"),
            "XDG_STATE_HOME": str(scratch / "state"),
            "AGENTDOC_CONFIG": str(tmp_path / "agentdoc-config.toml"),
            "AGENTDOC_CLAUDE": str(fake.executable),
            **{k: v for k, v in fake.env.items() if k != "PATH"},
        }
        return Nvim(nvim, path, scratch, env, lua)

    yield from quit_at_the_end(start)


@pytest.fixture
def document(tmp_path: Path) -> Path:
    # Real editors write under the system temp dir in place; keep the document elsewhere.
    return chat_in(tmp_path / "docs", DOC)


def test_run_streams_the_reply_into_the_buffer(
    document: Path, start_nvim: Callable[..., Nvim], plain_claude: FakeClaude
) -> None:
    editor = start_nvim(document, plain_claude)
    assert editor.expr("exists(':AgentdocRun') && get(b:, 'agentdoc', 0)") == 1
    editor.command("AgentdocRun")
    wait_for(lambda: "plain reply from the mock" in document.read_text(), what="the reply")
    wait_for(lambda: state_of(document) == "idle", what="the turn to end")
    wait_for(lambda: editor.shows(document), what="Neovim to reload the reply")
    assert "## Assistant" in editor.buffer()
    wait_for(lambda: editor.notes() != [], what="the reply's end to be told")
    assert editor.notes() == [DONE]
    assert editor.expr("v:lua.require'agentdoc'.statusline()") == "agentdoc: idle"


def test_cancel_stops_the_reply_and_the_buffer_follows(
    document: Path, start_nvim: Callable[..., Nvim], tmp_path: Path, gated_claude: FakeClaude
) -> None:
    gate = tmp_path / "gate"
    editor = start_nvim(document, gated_claude)
    try:
        editor.command("AgentdocRun")
        wait_for(lambda: "w295 " in editor.buffer(), what="the reply streaming into the buffer")
        line = editor.expr("v:lua.require'agentdoc'.statusline()")
        assert line.startswith("agentdoc: streaming (turn 1, ~")
        editor.command("AgentdocCancel")
        wait_for(lambda: state_of(document) != "streaming", what="the turn to stop")
        wait_for(lambda: editor.notes() != [], what="the cancel to be reported")
        assert editor.notes() == [{"msg": "the reply was cancelled", "level": 2}]
        wait_for(lambda: editor.shows(document), what="Neovim to show the cancelled reply")
        assert "interrupted" in editor.buffer() and "w295 " in editor.buffer()
    finally:
        gate.touch()


def test_undo_takes_the_turn_back_and_the_buffer_follows(
    document: Path, start_nvim: Callable[[Path, FakeClaude], Nvim], plain_claude: FakeClaude
) -> None:
    editor = start_nvim(document, plain_claude)
    editor.command("AgentdocRun")
    wait_for(lambda: state_of(document) == "idle" and "## Assistant" in editor.buffer(), "a reply")
    wait_for(lambda: editor.notes() == [DONE], what="the reply's end to be told")
    editor.command("AgentdocUndo")
    wait_for(lambda: len(editor.notes()) == 2, what="the undo to be reported")
    assert editor.notes()[1] == {
        "msg": "the last turn was taken back; its prompt is pending again",
        "level": 2,
    }
    # The body is as it was before the turn; only the session id has gone from the frontmatter.
    assert document.read_text().split("---\n", 2)[2] == DOC.split("---\n", 2)[2]
    wait_for(lambda: editor.shows(document), what="Neovim to reload the document")
    editor.command("AgentdocUndo")
    wait_for(lambda: len(editor.notes()) == 3, what="the refusal to be shown")
    assert "nothing to undo" in editor.notes()[2]["msg"]


def test_an_error_reaches_vim_notify(
    document: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
) -> None:
    fake = fake_claude(None, exit="1", stderr="the model is having a bad day")
    editor = start_nvim(document, fake)
    editor.command("AgentdocRun")
    wait_for(lambda: editor.notes() != [], what="the failure to be shown")
    [note] = editor.notes()
    assert note["level"] == 4  # vim.log.levels.ERROR
    assert note["msg"].startswith("Error: chat.md turn 1: ")
    assert "the model is having a bad day" in note["msg"]


def test_plain_markdown_is_left_alone(
    tmp_path: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\n## User\n\nnot a session document\n")
    editor = start_nvim(notes, fake_claude(None))
    assert editor.expr("get(b:, 'agentdoc', 0)") == 0
    editor.command("AgentdocRun")
    wait_for(lambda: editor.notes() != [], what="the refusal")
    assert "not an agentdoc session document" in editor.notes()[0]["msg"]
    assert fake_claude(None).calls() == []


def test_checkhealth_runs_doctor(
    document: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
) -> None:
    editor = start_nvim(document, fake_claude(None))
    editor.command("checkhealth agentdoc")
    wait_for(lambda: "watch limit" in editor.buffer(), what="the health report")
    report = editor.buffer()
    assert "claude CLI" in report and "authentication" in report
    # The fake `claude` prints no version: doctor's failure and its fix reach the report.
    assert "ERROR" in report and "claude runs" in report


@pytest.mark.parametrize(("keys", "line"), [("G", "last"), ("gg", "first")])
def test_the_view_follows_the_reply_while_the_cursor_is_at_the_end(
    document: Path,
    start_nvim: Callable[..., Nvim],
    tmp_path: Path,
    keys: str,
    line: str,
    gated_claude: FakeClaude,
) -> None:
    gate = tmp_path / "gate"
    editor = start_nvim(document, gated_claude)
    try:
        editor.type(f"<Esc>{keys}")
        editor.command("AgentdocRun")
        wait_for(lambda: "w295 " in editor.buffer(), what="the reply streaming into the buffer")
        where = editor.expr("[line('.'), line('$')]")
        assert where[1] > 12
        assert where[0] == (where[1] if line == "last" else 1)
    finally:
        gate.touch()
    wait_for(lambda: state_of(document) == "idle", what="the turn to end")
    wait_for(lambda: editor.shows(document), what="Neovim to reload the whole reply")
    where = editor.expr("[line('.'), line('$')]")
    assert where[0] == (where[1] if line == "last" else 1)


def test_a_reply_the_daemon_wrote_is_told_done(
    document: Path, fake_claude: Callable[..., FakeClaude], start_nvim: Callable[..., Nvim]
) -> None:
    editor = start_nvim(document, fake_claude(None))
    # What a daemon leaves behind: a turn streamed, then ended; the plugin reads the status.
    status = document.parent / ".agentdoc" / "chat.md.status.json"
    status.parent.mkdir()
    base = {"version": 1, "document": "chat.md", "turn": 1, "tokens": 3}
    status.write_text(json.dumps({**base, "state": "streaming", "updated": "T1"}))
    wait_for(lambda: "streaming" in editor.expr("v:lua.require'agentdoc'.statusline()"))
    # Within the same second as the last streaming update (`updated` has whole seconds).
    status.write_text(json.dumps({**base, "state": "idle", "updated": "T1"}))
    wait_for(lambda: editor.notes() != [], what="the done notice")
    assert editor.notes() == [DONE]
    status.write_text(json.dumps({**base, "state": "idle", "updated": "T3"}))  # no new turn
    status.write_text(json.dumps({**base, "turn": 2, "state": "error", "updated": "T4",
                                  "error": "claude exited with code 1"}))  # fmt: skip
    wait_for(lambda: len(editor.notes()) == 2, what="the daemon's error")
    assert editor.notes()[1] == {"msg": "agentdoc: chat.md: claude exited with code 1", "level": 4}


def test_the_status_of_a_document_in_a_synced_folder_is_read_where_it_lives(
    tmp_path: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notes = tmp_path / "notes"
    (notes / ".stfolder").mkdir(parents=True)  # Syncthing's marker
    (notes / "sub").mkdir()
    document = notes / "sub" / "chat.md"
    document.write_text(DOC)
    editor = start_nvim(document, fake_claude(None))
    # Where the editor's environment puts agentdoc's state (XDG_STATE_HOME, as start_nvim sets).
    monkeypatch.setenv("AGENTDOC_STATE_DIR", str(tmp_path / "nvim" / "state" / "agentdoc"))
    status = state_folder(document.parent) / "chat.md.status.json"
    assert notes not in status.parents
    status.parent.mkdir(parents=True)
    base = {"version": 1, "document": "chat.md", "turn": 1, "tokens": 3, "updated": "T1"}
    status.write_text(json.dumps({**base, "state": "streaming"}))
    wait_for(lambda: "streaming" in editor.expr("v:lua.require'agentdoc'.statusline()"))


MAPS = "[maparg('\\r', 'n'), maparg('\\c', 'n'), maparg('\\a', 'n'), maparg('<F5>', 'n')]"


@pytest.mark.parametrize(
    ("lua", "maps"),
    [
        ("", ["<Cmd>AgentdocRun<CR>", "<Cmd>AgentdocCancel<CR>", "<Cmd>AgentdocApprove<CR>", ""]),
        (
            "require('agentdoc').setup({keys = {run = '<F5>', cancel = false}})",
            ["", "", "<Cmd>AgentdocApprove<CR>", "<Cmd>AgentdocRun<CR>"],
        ),
        ("require('agentdoc').setup({keys = false})", ["", "", "", ""]),
    ],
)
def test_default_key_maps_can_be_moved_or_dropped(
    document: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
    lua: str,
    maps: list[str],
) -> None:
    editor = start_nvim(document, fake_claude(None), lua)
    assert editor.expr(MAPS) == maps


def test_approve_and_deny_answer_through_the_cli(
    document: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    recorder = tmp_path / "agentdoc-recorder"
    recorder.write_text(f'#!/bin/sh\nprintf "%s|" "$@" >> {calls}\necho >> {calls}\n')
    recorder.chmod(0o755)
    lua = f"require('agentdoc').setup({{command = '{recorder}'}})"
    editor = start_nvim(document, fake_claude(None), lua)
    for command in ("AgentdocApprove", "AgentdocApprove!", "AgentdocDeny not that file"):
        count = len(editor.notes()) + 1
        editor.command(command)
        wait_for(lambda n=count: len(editor.notes()) == n, what=command)  # type: ignore[misc]
    path = str(document)
    assert calls.read_text().splitlines() == [
        f"approve|{path}|",
        f"approve|{path}|--always|",
        f"deny|{path}|--message|not that file|",
    ]
    assert [n["msg"] for n in editor.notes()] == [
        "agentdoc: the tool use in chat.md is allowed",
        "agentdoc: the tool use in chat.md is allowed for the session",
        "agentdoc: the tool use in chat.md is refused",
    ]


def test_the_statusline_says_why_a_prompt_is_held(
    document: Path, start_nvim: Callable[[Path, FakeClaude], Nvim], plain_claude: FakeClaude
) -> None:
    from tests.support.daemon import Running, make_daemon

    # A prompt already pending when the daemon starts is held back, and the status says why.
    with Running(make_daemon(document.parent, plain_claude), discovered=True):
        wait_for(lambda: state_of(document) == "pending", what="the held prompt")
        editor = start_nvim(document, plain_claude)
        line = editor.expr("v:lua.require'agentdoc'.statusline()")
    assert line.startswith("agentdoc: pending: the prompt was already there"), line
    assert plain_claude.calls() == []


@pytest.fixture
def open_answered(
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[[Path, FakeClaude], Nvim],
    folder: Path,
) -> Callable[[str, int], tuple[Path, Nvim]]:
    """Neovim on `folder`/`name`.md, which holds `exchanges` answered questions ("Question n?",
    "Answer n.") and an empty prompt after them; the fake `claude` is never asked."""

    def open_(name: str, exchanges: int) -> tuple[Path, Nvim]:
        turns = "".join(
            f"## User\n\nQuestion {n}?\n\n## Assistant\n\nAnswer {n}.\n\n"
            for n in range(1, exchanges + 1)
        )
        path = folder / f"{name}.md"
        path.write_text(f"---\nagentdoc: {{}}\n---\n\n# {name.title()}\n\n{turns}## User\n\n")
        return path, start_nvim(path, fake_claude(None))

    return open_


def test_archive_moves_older_exchanges_and_reloads_the_buffer(
    open_answered: Callable[[str, int], tuple[Path, Nvim]], folder: Path
) -> None:
    path, editor = open_answered("long", 4)
    editor.command("AgentdocArchive 1")
    wait_for(lambda: (folder / "long.archive.md").exists(), what="the archive file")
    wait_for(lambda: editor.notes() != [], what="the archive to be reported")
    assert editor.notes() == [{"msg": "older exchanges moved to long.archive.md", "level": 2}]
    wait_for(lambda: editor.shows(path), what="Neovim to reload the document")
    assert "Question 1?" not in editor.buffer() and "Question 4?" in editor.buffer()
    assert "Question 3?" in (folder / "long.archive.md").read_text()


def test_search_fills_the_quickfix_list(
    document: Path,
    fake_claude: Callable[..., FakeClaude],
    start_nvim: Callable[..., Nvim],
) -> None:
    folder = document.parent
    answered = "---\nagentdoc: {archived: 1}\n---\n\n## User\n\nWidgets again?\n\n"
    (folder / "older.md").write_text(answered + "## Assistant\n\nBlue widgets.\n\n## User\n\n")
    (folder / "older.archive.md").write_text("## User\n\nA widget?\n\n## Assistant\n\nA thing.\n")
    editor = start_nvim(document, fake_claude("plain_text.ndjson"))
    editor.command(f"cd {folder}")
    editor.command("AgentdocSearch widget*")
    wait_for(lambda: editor.expr("len(getqflist())") == 2, what="the hits in the quickfix list")
    items = [
        (editor.expr(f"bufname({item['bufnr']})"), item["lnum"], item["text"])
        for item in editor.expr("getqflist()")
    ]
    assert items == [
        ("older.md", 7, "turn-2: Widgets again?"),
        ("older.archive.md", 3, "turn-1: A widget?"),
    ]
    assert editor.expr("getqflist({'title': 1}).title") == "agentdoc search widget*"
    editor.command("AgentdocSearch nothingmatches")
    wait_for(lambda: editor.notes() != [], what="the empty search to be told")
    assert editor.notes()[-1]["msg"] == "agentdoc search: no matches for nothingmatches"


def test_undo_n_takes_several_turns_back(
    open_answered: Callable[[str, int], tuple[Path, Nvim]],
) -> None:
    path, editor = open_answered("three", 3)
    editor.command("AgentdocUndo! 2")
    wait_for(lambda: editor.notes() != [], what="the undo to be reported")
    assert editor.notes() == [
        {"msg": "the last 2 turns were taken back; the first one's prompt is pending again",
         "level": 2}
    ]  # fmt: skip
    wait_for(lambda: editor.shows(path), what="Neovim to reload the document")
    assert "Answer 1." in editor.buffer() and "Question 2?" in editor.buffer()
    assert "Answer 2." not in editor.buffer() and "Question 3?" not in editor.buffer()
    # The prompt the undo left pending does not stop one more undo.
    editor.command("AgentdocUndo")
    wait_for(lambda: len(editor.notes()) == 2, what="the second undo to be reported")
    assert editor.notes()[1]["msg"] == "the last turn was taken back; its prompt is pending again"
    wait_for(lambda: "Answer 1." not in editor.buffer(), what="Neovim to reload the document")
    assert "Question 1?" in editor.buffer() and "Question 2?" not in editor.buffer()
