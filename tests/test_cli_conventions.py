"""The command line keeps the conventions of git, gh, grep and llm: quiet exits when a pipe
closes, grep's exit codes, -v anywhere, examples in --help, a log file to read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentdoc.cli import cli
from tests.process_support import CLI

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
