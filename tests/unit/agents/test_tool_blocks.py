"""Tool blocks in the document read as text: the tool and its main argument, never escaped
JSON, and the right number of lines."""

from __future__ import annotations

from typing import Any

import pytest

from agentdoc.agents import ToolPart
from agentdoc.document import render_tool


def summary(name: str, tool_input: dict[str, Any], **more: Any) -> str:
    block = render_tool(ToolPart("t1", name, tool_input, **more))
    return block.splitlines()[0]


@pytest.mark.parametrize(
    ("name", "tool_input", "shown"),
    [
        ("write", {"filePath": "/w/a.txt", "content": "x"}, "🔧 write: /w/a.txt"),  # OpenCode
        ("exec_command", {"cmd": "ls -la", "call_id": "c1"}, "🔧 exec_command: ls -la"),  # Codex
        ("shell", {"command": ["bash", "-lc", "make"]}, "🔧 shell: bash -lc make"),
        ("edit", {"locations": ["/w/b.md"]}, "🔧 edit: /w/b.md"),  # Gemini, input in its diff
        ("edit", {}, "🔧 edit — "),
    ],
)
def test_a_tool_is_titled_with_its_main_argument(
    name: str, tool_input: dict[str, Any], shown: str
) -> None:
    assert summary(name, tool_input, result="done").startswith(f"<details><summary>{shown}")


def test_inputs_show_as_text_not_escaped_json() -> None:
    line = summary("lookup", {"call_id": "c1", "q": "a & <b>"}, result="one\ntwo")
    assert '{"call_id": "c1", "q": "a &amp; &lt;b&gt;"}' in line
    assert "&quot;" not in line
    assert line.endswith("— 2 lines</summary>")
    assert summary("Bash", {"command": "make"}, result="ok").endswith("— 1 line</summary>")


def test_the_agents_own_title_stands_in_for_an_empty_input() -> None:
    line = summary("edit", {}, title="Writing to notes.txt", result="")
    assert line.startswith("<details><summary>🔧 edit: Writing to notes.txt")
