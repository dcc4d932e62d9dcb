"""The approval block: a tool permission request asked, and answered, in the document (pure).

While the agent waits for permission to use a tool, the reply shows a callout with three boxes
(allow / allow for the session / deny) between two HTML-comment markers that carry a fresh
random nonce. Only a box inside the markers with that nonce counts, so model text (which never
knows the nonce) cannot forge an answer. Text typed under a ticked *deny* is the reason given to
the model. Once answered, the block becomes a one-line record of the decision.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal

from agentdoc.localstate import state_folder

INPUT_PREVIEW_CHARS = 1500  # per string value of the tool input shown in the block
_START = "<!-- agentdoc:approval {nonce} (tick one box and save) -->"
_END = "<!-- agentdoc:approval-end {nonce} -->"
# A box: `[ ]`, or ticked. A tick that lands while a reply streams is merged into the reply's
# next write as typed text (`merge_text` keeps what the person typed and never drops a character
# of the region), so `[ ]` ticked as `[x]` may be written back as `[ x]`; a person typing an x
# into the box on a phone may leave the space too. Either way the box is ticked.
_BOX = re.compile(r"^[ \t]*(?:>[ \t]?)*[ \t]*[-*+][ \t]+\[( | ?[xX] ?)\][ \t]+(.*)$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)*")

Behavior = Literal["allow", "always", "deny"]


@dataclass(frozen=True)
class Answer:
    behavior: Behavior
    message: str = ""  # the reason for a deny, as the person wrote it
    by: str = "document"  # where the answer came from: "document", "command", "timeout", …
    option: int | None = None  # the agent's option ticked (its index), in a block of options


# What ticking one of an agent's options means, by the option's kind (as the protocol names it).
KIND_BEHAVIOR: Mapping[str, Behavior] = {
    "allow_once": "allow",
    "allow_always": "always",
    "reject_once": "deny",
    "reject_always": "deny",
}


def target(tool_input: Mapping[str, Any]) -> str:
    """What the tool acts on, in a few words: a path, a command, a pattern."""
    for key in ("file_path", "notebook_path", "path", "command", "pattern", "url"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            return " ".join(value.split())[:120] + ("…" if len(value) > 120 else "")
    return ""


def shorten(value: Any) -> Any:
    """The input with long strings cut, for showing (the full input is kept elsewhere)."""
    if isinstance(value, str) and len(value) > INPUT_PREVIEW_CHARS:
        return value[:INPUT_PREVIEW_CHARS] + f"… ({len(value)} characters in all)"
    if isinstance(value, dict):
        return {k: shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shorten(v) for v in value]
    return value


def _code(text: str) -> str:
    """Inline code that survives backticks in `text`."""
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def render_approval(
    tool: str,
    tool_input: Mapping[str, Any],
    nonce: str,
    full_input: str | None = None,
    *,
    options: Sequence[str] | None = None,
    agent: str = "The agent",
) -> str:
    """The pending block. `full_input`: where the whole input is, when the block shortens it.
    `options`: one box per option the agent offers (their names), instead of the standard three.

    `nonce` must be fresh and random per request (`secrets.token_hex`): it is what makes the
    block impossible for model text to forge.
    """
    what = target(tool_input)
    on = f" on {_code(what)}" if what else ""
    shown = json.dumps(shorten(dict(tool_input)), ensure_ascii=False, indent=2)
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", shown)), default=0) + 1)
    lines = [
        _START.format(nonce=nonce),
        "> [!IMPORTANT]",
        f"> {_name(agent)} wants to use **{_name(tool)}**{on} (tool input folded below).",
        *_boxes(tool, options),
        ">",
        "> <details><summary>tool input</summary>",
        ">",
        f"> {fence}json",
        *[f"> {line}" for line in shown.splitlines()],
        f"> {fence}",
    ]
    if full_input is not None and shown != json.dumps(dict(tool_input), indent=2):
        lines.append(f"> The whole input is in {_code(full_input)}.")
    lines += [">", "> </details>", _END.format(nonce=nonce)]
    return "\n".join(lines)


def _boxes(tool: str, options: Sequence[str] | None) -> list[str]:
    if options is None:
        return [
            "> - [ ] allow",
            f"> - [ ] allow {_name(tool)} for the rest of this session",
            "> - [ ] deny",
        ]
    return [f"> - [ ] {_plain(name) or 'option'}" for name in options]


def _name(tool: str) -> str:
    """A tool name safe to put in bold: no markdown or HTML of its own (many agents name their
    tools with titles: words, paths and punctuation stay)."""
    return _plain(tool) or "a tool"


def _plain(text: str) -> str:
    """One line of plain words: no character that makes markdown, HTML or a box of its own."""
    kept = "".join(c for c in text if c.isprintable() and c not in _MARKUP)
    return " ".join(kept.split())[:200]


_MARKUP = set("*`[]<>\\|~&")


def render_decision(tool: str, tool_input: Mapping[str, Any], answer: Answer) -> str:
    """The one line an answered block becomes."""
    what = target(tool_input)
    on = f" on {_code(what)}" if what else ""
    verdict = {
        "allow": "allowed",
        "always": "allowed for the rest of the session",
        "deny": "denied",
    }[answer.behavior]
    by = {
        "document": " in the document",
        "command": " from the command line",
        "terminal": " in the terminal",
        "agentdoc": " by agentdoc",
        "timeout": "",  # the message says it: no answer within the time
    }.get(answer.by, "")
    reason = f": {_one_line(answer.message)}" if answer.message else ""
    return f"*🔐 **{_name(tool)}**{on} {verdict}{by}{reason}*"


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat.replace("*", "\\*")[:300]


def find_block(text: str, nonce: str) -> tuple[int, int] | None:
    """The span of the block with this nonce (markers included), or None."""
    start = text.find(_START.format(nonce=nonce))
    if start == -1:
        return None
    end_marker = _END.format(nonce=nonce)
    end = text.find(end_marker, start)
    if end == -1:
        return None
    return start, end + len(end_marker)


def read_answer(text: str, nonce: str, kinds: Sequence[str] | None = None) -> Answer | None:
    """The box ticked in the block, or None (no box ticked, or no block with this nonce).
    `kinds`: the kinds of the agent's options, one box each in order (else the standard three).

    More than one box ticked: a deny among them wins, since allowing is the one that matters.
    """
    span = find_block(text, nonce)
    if span is None:
        return None
    lines = text[span[0] : span[1]].splitlines()[1:-1]
    ticked: list[tuple[Behavior, int]] = []
    reason: list[str] = []
    in_deny = False
    boxes = 0
    for line in lines:
        box = _BOX.match(line)
        if box is not None:
            kind = _kind(box.group(2)) if kinds is None else _option_kind(kinds, boxes)
            in_deny = kind == "deny" and box.group(1) != " "
            if box.group(1) != " " and kind is not None:
                ticked.append((kind, boxes))
            boxes += 1
            continue
        stripped = _QUOTE.sub("", line).strip()
        if stripped.startswith("<details>"):
            in_deny = False
        elif in_deny and stripped:
            reason.append(stripped)
    return _decided(ticked, "\n".join(reason), per_option=kinds is not None)


def _option_kind(kinds: Sequence[str], index: int) -> Behavior | None:
    return KIND_BEHAVIOR.get(kinds[index]) if index < len(kinds) else None


def _decided(ticked: list[tuple[Behavior, int]], reason: str, *, per_option: bool) -> Answer | None:
    for behavior in ("deny", "always", "allow"):
        for kind, index in ticked:
            if kind == behavior:
                option = index if per_option else None
                return Answer(kind, reason if kind == "deny" else "", option=option)
    return None


def _kind(label: str) -> Behavior | None:
    label = label.strip().lower()
    if label == "allow":
        return "allow"
    if label.startswith("allow ") and label.endswith("for the rest of this session"):
        return "always"
    if label == "deny":
        return "deny"
    return None


def replace_block(text: str, nonce: str, new: str) -> str | None:
    """`text` with the block replaced by `new`; None if the block is not there."""
    span = find_block(text, nonce)
    if span is None:
        return None
    return text[: span[0]] + new + text[span[1] :]


def touches(tool_input: Mapping[str, Any], protected: Sequence[PurePath]) -> bool:
    """Whether a tool call names one of the protected files (or folders) anywhere in its input.

    Checked on every string of the input, mapping keys too (a patch tool may name
    its files only as the keys of ``changes``), paths resolved against nothing: a command line
    that merely mentions the document's name counts, because a shell can reach it by name.
    """
    needles = {str(p) for p in protected} | {p.name for p in protected}
    return any(needle in value for value in _strings(tool_input) for needle in needles)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in [*_strings(k), *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def protected_files(document: Path, sidecar: Path) -> list[Path]:
    """The files that carry the person's answers: no tool of the agent's may touch them."""
    return [document, sidecar, state_folder(document.parent)]


@dataclass(frozen=True)
class Asked:
    """A permission request still open in a document, as the page shows it."""

    nonce: str
    tool: str  # the tool's name, as the block shows it
    input: str  # the tool's input, as the block shows it (JSON)
    options: tuple[str, ...]  # the boxes' labels, in order


_OPEN = re.compile(r"<!-- agentdoc:approval ([0-9A-Za-z]+) \(tick one box and save\) -->")
_TOOL = re.compile(r"wants to use \*\*(.+?)\*\*")


def asked_in(text: str) -> list[Asked]:
    """The permission requests whose block is still unanswered in `text`."""
    found: list[Asked] = []
    for match in _OPEN.finditer(text):
        span = find_block(text, match.group(1))
        if span is None:
            continue
        lines = [_QUOTE.sub("", line) for line in text[span[0] : span[1]].splitlines()[1:-1]]
        tool = next((m.group(1) for line in lines if (m := _TOOL.search(line))), "a tool")
        boxes = tuple(b.group(2).strip() for line in lines if (b := _BOX.match(line)))
        fences = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
        shown = "\n".join(lines[fences[0] + 1 : fences[1]]) if len(fences) >= 2 else ""
        found.append(Asked(match.group(1), tool, shown, boxes))
    return found


def tick(text: str, nonce: str, behavior: Behavior, reason: str = "") -> str | None:
    """`text` with the box for `behavior` ticked in the block `nonce` (and, for a deny, the
    reason written under it, as a person would type it); None if the block holds no box that
    plainly means it (a block of an agent's own options named otherwise)."""
    span = find_block(text, nonce)
    if span is None:
        return None
    block = text[span[0] : span[1]]
    lines = block.split("\n")
    for i, line in enumerate(lines):
        box = _BOX.match(line)
        if box is None or _means(box.group(2)) != behavior:
            continue
        at = line.index("[ ]") if "[ ]" in line else -1
        if at < 0:
            return None
        lines[i] = line[:at] + "[x]" + line[at + 3 :]
        if behavior == "deny" and reason.strip():
            quote = _QUOTE.match(line)
            prefix = (quote.group(0) if quote else "").rstrip() + " "
            lines[i + 1 : i + 1] = [prefix + part for part in reason.strip().splitlines()]
        return text[: span[0]] + "\n".join(lines) + text[span[1] :]
    return None


def _means(label: str) -> Behavior | None:
    """What a box's label plainly means: the standard three boxes, or an agent's option named so."""
    known = _kind(label)
    if known is not None:
        return known
    first = label.strip().lower().split(" ")[0] if label.strip() else ""
    if first in ("allow", "yes", "approve", "accept") and "always" not in label.lower():
        return "allow"
    if first in ("deny", "reject", "no", "refuse"):
        return "deny"
    return None
