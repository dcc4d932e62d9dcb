"""What the fake Messages API is scripted with (text, tool calls) and what the CLI sent it back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry


def write(path: Path, content: str) -> ScriptEntry:
    return [
        {"type": "tool_use", "name": "Write", "input": {"file_path": str(path), "content": content}}
    ]


def said(text: str) -> ScriptEntry:
    return [{"type": "text", "text": text}]


def tool_results(api: FakeMessagesAPI) -> list[dict[str, Any]]:
    """Every tool_result block the CLI sent to the API, in order."""
    found = []
    for message in api.requests[-1].messages():
        content = message.get("content")
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return str(content)
