"""The command line keeps the conventions of git, gh, grep and llm: quiet exits when a pipe
closes, grep's exit codes, -v anywhere, examples in --help, a log file to read."""

from __future__ import annotations

import os
import subprocess
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentdoc.cli import cli
from tests.support.fake_claude import FakeClaude
from tests.support.processes import CLI

REPLY_WITH_NOTICES = """\
---
title: Gadget brainstorm
agentdoc: {}
---

# Widgets and gadgets

## User

Write plan.txt please.

## Assistant

<!-- agentdoc:reply 0123abcd start -->
Here is the roadmap.

<!-- agentdoc:approval 0123abcd (tick one box and save) -->
> [!IMPORTANT]
> Claude wants to use **Write** on `plan.txt` (tool input folded below).
<!-- agentdoc:approval-end 0123abcd -->

> [!WARNING]
> **The reply was interrupted** before it finished: the turn was cancelled.
<!-- agentdoc:reply 0123abcd end -->

<sub>claude-sonnet-4 · 1.2k in / 40 out · 3.1 s · [thinking](chat.thinking.md)</sub>

## User

"""


def search(*args: str) -> Result:
    return CliRunner().invoke(cli, ["search", *args], catch_exceptions=False)


def test_search_finds_the_conversation_and_its_title_not_agentdoc_s_own_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chat.md").write_text(REPLY_WITH_NOTICES)
    monkeypatch.chdir(tmp_path)
    found = search("roadmap")
    assert (found.exit_code, found.stdout) == (0, "chat.md#turn-1: Here is the roadmap.\n")
    # The footer, the failure notice and the permission block are agentdoc's words.
    for word in ("thinking", "sonnet", "interrupted", "wants"):
        missed = search(word)
        assert (missed.exit_code, missed.stdout) == (1, ""), word
        assert "no matches" in missed.stderr
    title = search("gadgets")
    assert (title.exit_code, title.stdout) == (0, "chat.md: # Widgets and gadgets\n")
    assert search("--vimgrep", "gadgets").stdout == "chat.md:6:1:# Widgets and gadgets\n"
    assert search("--prompts", "gadgets").exit_code == 1  # a title is no prompt


def test_search_finds_a_title_that_only_the_frontmatter_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "chat.md").write_text(REPLY_WITH_NOTICES.replace("# Widgets and gadgets", ""))
    monkeypatch.chdir(tmp_path)
    assert search("brainstorm").stdout == "chat.md: title: Gadget brainstorm\n"
    assert search("agentdoc").exit_code == 1  # the settings are not words to find


def closed_pipe_run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`agentdoc ARGS | head -0`: stdout's reader is gone before anything is written."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run(
            [*CLI, *args], stdout=writer, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=60
        )
    finally:
        os.close(writer)


@pytest.mark.parametrize("command", [["status"], ["search", "roadmap"], ["doctor"]])
def test_a_pipe_closed_early_ends_the_command_quietly(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "chat.md").write_text(REPLY_WITH_NOTICES)
    done = closed_pipe_run(command, tmp_path)
    assert (done.returncode, done.stderr) == (0, "")


def test_verbose_works_after_the_command_too(tmp_path: Path) -> None:
    import logging

    root = logging.getLogger()
    before = root.level
    try:
        for args, level in (
            (["status", "-v", str(tmp_path)], logging.INFO),
            (["-v", "status", "-v", str(tmp_path)], logging.DEBUG),
            (["status", str(tmp_path), "-vv"], logging.DEBUG),
        ):
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
            assert root.level == level, args
    finally:
        root.setLevel(before)


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_s_help_shows_examples(command: str) -> None:
    shown = CliRunner().invoke(cli, [command, "--help"], catch_exceptions=False).stdout
    examples = shown.partition("Examples:\n")[2].splitlines()
    assert examples, shown
    # Real command lines, this command's among them.
    assert all("agentdoc " in line for line in examples if line.strip()), shown
    assert any(f"agentdoc {command}" in line for line in examples), shown


def complete(words: str, tmp_path: Path) -> list[str]:
    """What bash would offer for the last word of `words` (click's completion protocol)."""
    env = {
        "_AGENTDOC_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split(" ")) - 1),
    }
    result = CliRunner().invoke(cli, [], env=env, prog_name="agentdoc")
    assert result.exit_code == 0, result.output
    return [value for kind, value in (line.split(",", 1) for line in result.output.splitlines())]


def test_presets_agents_and_editors_complete(tmp_path: Path) -> None:
    presets = Path(os.environ["AGENTDOC_CONFIG"]).parent / "presets"
    presets.mkdir()
    (presets / "reviewer.md").write_text("---\ndescription: reviews\n---\nBe terse.\n")
    (presets / "researcher.md").write_text("---\ndescription: reads\n---\nCite.\n")
    assert complete("agentdoc new x.md --preset re", tmp_path) == ["researcher", "reviewer"]
    assert complete("agentdoc ask x.md hi --preset rev", tmp_path) == ["reviewer"]
    assert {"claude", "gemini", "codex", "opencode"} <= set(
        complete("agentdoc new x.md --agent ", tmp_path)
    )
    assert complete("agentdoc new x.md --agent ge", tmp_path) == ["gemini"]
    assert complete("agentdoc editor v", tmp_path) == ["vim", "vscode"]


def test_watch_keeps_a_log_file_that_logs_shows(tmp_path: Path, plain_claude: FakeClaude) -> None:
    from tests.support.processes import base_env, run_cli, watching, write_config
    from tests.support.waiting import wait_for

    state = tmp_path / "state"
    config = write_config(tmp_path / "config.toml", warm_sessions=0)
    env = base_env(
        tmp_path,
        AGENTDOC_STATE_DIR=str(state),
        AGENTDOC_CONFIG=str(config),
        AGENTDOC_CLAUDE=str(plain_claude.executable),
        **plain_claude.env,
    )
    env["PATH"] = os.environ["PATH"]
    root = tmp_path / "notes"
    for folder in ("a", "b"):
        (root / folder).mkdir(parents=True)
        (root / folder / "chat.md").write_text("---\nagentdoc: {}\n---\n\n## User\n\n")
    with watching(root, env, tmp_path / "terminal.log") as daemon:
        assert f"log: {state / 'watch.log'}" in daemon.log()
        for folder in ("a", "b"):
            doc = root / folder / "chat.md"
            doc.write_text(doc.read_text() + "Hi\n")
            wait_for(partial(answered, doc), "the reply")
        shown = run_cli(["logs"], env)
        assert shown.returncode == 0, shown.stderr
        assert "start-up done" in shown.stdout  # INFO reaches the file whatever -v says
        assert f" {daemon.pid} INFO " in shown.stdout  # the pid tells two daemons apart
        # Each turn's states, named by the path under the watched root, in the terminal too.
        for folder in ("a", "b"):
            wait_for(partial(logged, f"{folder}/chat.md turn 1: done", env), "the turn's end")
            assert f"{folder}/chat.md turn 1: done" in daemon.log()
    assert run_cli(["logs", "--path"], env).stdout.strip() == str(state / "watch.log")
    assert run_cli(["logs", "-n", "1"], env).stdout.count("\n") == 1


def answered(doc: Path) -> bool:
    from tests.support.processes import roles

    return roles(doc)[-2:] == ["assistant", "user"]


def logged(line: str, env: dict[str, str]) -> bool:
    from tests.support.processes import run_cli

    return line in run_cli(["logs"], env).stdout


def test_logs_says_where_the_log_will_be_before_there_is_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["logs"], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "no log yet: `agentdoc watch` writes it to" in result.stderr


def test_logs_follow_goes_on_across_a_rotation(tmp_path: Path) -> None:
    import select
    import signal

    log = Path(os.environ["AGENTDOC_STATE_DIR"]) / "watch.log"
    log.parent.mkdir(parents=True)
    log.write_text("old line\n")
    follower = subprocess.Popen(
        [*CLI, "logs", "-f"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )

    def next_line() -> str:
        assert follower.stdout is not None
        ready, _, _ = select.select([follower.stdout], [], [], 20)
        assert ready, "no line within 20 s"
        return follower.stdout.readline()

    try:
        assert next_line() == "old line\n"
        with log.open("a") as f:
            f.write("appended\n")
        assert next_line() == "appended\n"
        log.rename(log.with_name("watch.log.1"))
        log.write_text("after the rotation\n")
        assert next_line() == "after the rotation\n"
    finally:
        follower.send_signal(signal.SIGINT)
        _, err = follower.communicate(timeout=10)
    assert follower.returncode == 130 and err == ""


def test_two_chat_md_are_told_apart_in_status_and_the_live_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, claude_on_path: FakeClaude
) -> None:
    monkeypatch.chdir(tmp_path)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "chat.md").write_text("---\nagentdoc: {}\n---\n\n## User\n\nHi\n")
        ran = CliRunner().invoke(cli, ["run", f"{folder}/chat.md"], catch_exceptions=False)
        assert ran.exit_code == 0, ran.output
        assert f"{folder}/chat.md turn 1: done" in ran.stderr  # the plain live line
    shown = CliRunner().invoke(cli, ["status"], catch_exceptions=False).stdout
    assert "\na/chat.md: idle (turn 1" in shown and "\nb/chat.md: idle (turn 1" in shown


def test_an_unexpected_error_leaves_its_traceback_in_the_log_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from agentdoc.cli import main
    from agentdoc.errors import EXIT_UNEXPECTED

    def broken(*args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("agentdoc.records.folder_statuses", broken)
    assert main(["status", str(tmp_path)]) == EXIT_UNEXPECTED
    [told] = [r.getMessage() for r in caplog.records if r.name == "agentdoc.cli.commands"]
    log = Path(os.environ["AGENTDOC_STATE_DIR"]) / "watch.log"
    assert f"unexpected error: a bug (the details are in {log}" in told
    assert "Traceback" in log.read_text() and "RuntimeError: a bug" in log.read_text()


def test_watch_goes_on_when_the_state_folder_cannot_hold_its_log(tmp_path: Path) -> None:
    from tests.support.processes import base_env, watching

    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder would be")
    env = base_env(tmp_path, AGENTDOC_STATE_DIR=str(blocked))
    root = tmp_path / "notes"
    root.mkdir()
    with watching(root, env, tmp_path / "terminal.log") as daemon:
        told = daemon.log()
    assert f"cannot write the log file {blocked / 'watch.log'}" in told
    assert "logging to the terminal only" in told and "\nlog: " not in told
