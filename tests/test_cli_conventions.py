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
