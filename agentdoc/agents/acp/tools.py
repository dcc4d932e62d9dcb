"""An ACP tool call's fields as a turn shows them: its name, its input (with the files it acts
on) and its result as text. Pure."""

from __future__ import annotations

import json
from typing import Any

from agentdoc.agents.acp.schema import ToolCallFields

# Where a command's output is in a raw output object (codex-acp: `formatted_output`, with the
# command, timings and ids beside it), best first.
OUTPUT_KEYS = ("formatted_output", "aggregated_output", "output", "stdout")


def tool_name(fields: ToolCallFields) -> str:
    return fields.title or fields.kind or "tool"


def tool_input(fields: ToolCallFields) -> dict[str, Any]:
    """The tool's raw input, with the files it acts on (``locations``, the paths of its diffs)
    where a guard can see them even when the raw input does not name them."""
    raw = fields.raw_input
    data: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if raw is not None and not isinstance(raw, dict):
        data["input"] = raw
    paths = [loc.path for loc in fields.locations or ()]
    paths += [
        str(item["path"])
        for item in fields.content or ()
        if item.get("type") == "diff" and item.get("path")
    ]
    if paths and "locations" not in data:
        data["locations"] = list(dict.fromkeys(paths))
    diffs = [item for item in fields.content or () if item.get("type") == "diff"]
    if diffs and not data.keys() - {"locations"}:
        # Gemini CLI asks with only the path and title: what it will write is in its diffs,
        # and the approval block must show it.
        data["changes"] = [_change(item) for item in diffs]
    return data


def _change(diff: dict[str, Any]) -> dict[str, Any]:
    change = {"path": diff.get("path"), "new_text": diff.get("newText")}
    if diff.get("oldText"):
        change["old_text"] = diff["oldText"]
    return change


def tool_result(fields: ToolCallFields) -> str:
    parts = [_content_text(item) for item in fields.content or ()]
    text = "\n".join(p for p in parts if p)
    if text or fields.raw_output is None:
        return text
    output = fields.raw_output
    if isinstance(output, dict):
        found = [output[k] for k in OUTPUT_KEYS if isinstance(output.get(k), str)]
        if found:
            return str(found[0])
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)


def _content_text(item: dict[str, Any]) -> str:
    kind = item.get("type")
    if kind == "content":
        inner = item.get("content")
        text = inner.get("text") if isinstance(inner, dict) else None
        return text if isinstance(text, str) else ""
    if kind == "diff":
        return f"{item.get('path', '')}\n{item.get('newText', '')}"
    return ""
