"""Edit the ``agentdoc`` mapping in a document's frontmatter, changing as few bytes as possible.

Three strategies, least invasive first, each checked by reading the result back: rewrite only the
lines of the entries that change (located through the YAML node marks); have ruamel re-dump just
the ``agentdoc`` entry (``agentdoc: {session: x}``); re-dump the whole frontmatter, only when it
is itself in flow style. Reading the frontmatter is :mod:`agentdoc.document.frontmatter`'s job.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

from agentdoc.document.frontmatter import (
    BOM,
    DEFAULT_STEP,
    LINE_BREAK,
    META_KEY,
    FrontmatterError,
    Split,
    dominant_newline,
    load_yaml,
    locate,
    meta_mapping,
    new_yaml,
    read_meta,
    root_mapping,
    to_plain,
)

logger = logging.getLogger(__name__)

_KEY_LINE_COMMENT = re.compile(r"[ \t]+#[^\r\n]*$")
_ALIAS_AFTER_KEY = re.compile(r"[ \t]*:[ \t]*\*[^\s,\[\]{}]+")


class _CannotEdit(Exception):
    """The frontmatter has a shape this edit strategy does not handle; try the next one."""


def set_meta(text: str, updates: Mapping[str, Any | None]) -> str:
    """``text`` with ``agentdoc.<key>`` set for each update (None removes the key)."""
    if _already(read_meta(text), updates):
        return text  # the usual case (a turn re-recording its session): no YAML round trip
    parts, yaml_start = locate(text)
    if parts.frontmatter is None:
        return _with_new_frontmatter(parts, updates)
    root = root_mapping(load_yaml(parts.frontmatter))
    meta = meta_mapping(root)
    changes = _changed(meta, updates)
    if not changes or (meta is None and all(v is None for v in changes.values())):
        return text
    new_yaml = _edited(parts.frontmatter, changes, parts.newline, _expected(root, changes))
    yaml_end = yaml_start + len(parts.frontmatter)
    return text[:yaml_start] + new_yaml + text[yaml_end:]


def _edited(src: str, changes: Mapping[str, Any], nl: str, expected: dict[str, Any]) -> str:
    """The least invasive edit of ``src`` that reads back as ``expected``."""
    for strategy in (_edit_lines, _redump_entry):
        try:
            candidate = strategy(src, changes, nl)
        except _CannotEdit:
            continue
        if _loads_to(candidate, expected):
            return candidate
        logger.debug("%s did not read back as intended; trying the next way", strategy.__name__)
    return _redump_all(src, changes, nl)


def _already(current: Mapping[str, Any] | None, updates: Mapping[str, Any | None]) -> bool:
    """Whether the ``agentdoc`` mapping already reads as ``updates`` would make it."""
    if current is None:
        return False
    return all(
        (key not in current) if value is None else (key in current and current[key] == value)
        for key, value in updates.items()
    )


def _changed(meta: CommentedMap | None, updates: Mapping[str, Any | None]) -> dict[str, Any]:
    """Only the updates that change something, so a no-op edit leaves the text untouched."""
    current = to_plain(meta) if meta is not None else {}
    return {
        k: v
        for k, v in updates.items()
        if (k in current if v is None else current.get(k, object()) != to_plain(v))
    }


def _expected(root: CommentedMap, updates: Mapping[str, Any | None]) -> dict[str, Any]:
    plain: dict[str, Any] = to_plain(root)
    meta = dict(plain.get(META_KEY) or {})
    for key, value in updates.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = to_plain(value)
    plain[META_KEY] = meta
    return plain


def _loads_to(yaml_text: str, expected: dict[str, Any]) -> bool:
    try:
        root = root_mapping(load_yaml(yaml_text))
        meta = meta_mapping(root)
    except FrontmatterError:
        return False
    return bool({**to_plain(root), META_KEY: to_plain(meta)} == expected)


def _with_new_frontmatter(parts: Split, updates: Mapping[str, Any | None]) -> str:
    meta = {k: v for k, v in updates.items() if v is not None}
    if not meta:
        return parts.bom + parts.body
    return add_frontmatter(parts.bom + parts.body, meta)


def add_frontmatter(
    body: str, meta: Mapping[str, Any], extra: Mapping[str, Any] | None = None
) -> str:
    """Put a new frontmatter with ``extra`` keys and an ``agentdoc`` mapping before ``body``."""
    bom = BOM if body.startswith(BOM) else ""
    nl = dominant_newline(body)
    data: dict[str, Any] = {k: v for k, v in (extra or {}).items() if k != META_KEY}
    data[META_KEY] = dict(meta)
    yaml_text = LINE_BREAK.sub(nl, _dump(data, DEFAULT_STEP))
    return f"{bom}---{nl}{yaml_text}---{nl}{body[len(bom) :]}"


def _dump(data: Any, step: int, keep_quotes: bool = False) -> str:
    yaml = new_yaml()
    yaml.preserve_quotes = keep_quotes
    yaml.indent(mapping=step, sequence=step + 2, offset=step)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def _indent(lines: list[str], column: int, newline: str) -> str:
    return "".join(" " * column + line + newline for line in lines)


# --- strategy 1: rewrite only the lines of the entries that change -------------------------------


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class _Block:
    """Where the entries of a block-style ``agentdoc`` mapping live in the YAML text."""

    entries: dict[str, tuple[Node, Node]]
    column: int
    step: int
    insert_at: int


def _compose_meta(src: str) -> tuple[Node, Node] | None:
    """The key and value nodes of the ``agentdoc`` entry; None if the mapping has none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        root = new_yaml().compose(src)
    if root is None:
        return None
    if not isinstance(root, MappingNode) or root.flow_style:
        raise _CannotEdit
    found = [(k, v) for k, v in root.value if isinstance(k, ScalarNode) and k.value == META_KEY]
    return found[0] if found else None


def _edit_lines(src: str, updates: Mapping[str, Any], nl: str) -> str:
    entry = _compose_meta(src)
    if entry is None:
        return _append_meta(src, {k: v for k, v in updates.items() if v is not None}, nl)
    block = _block(src, *entry)
    if block is None:
        raise _CannotEdit
    edits = _meta_edits(src, block, updates, nl)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        src = src[: edit.start] + edit.text + src[edit.end :]
    return src


def _append_meta(src: str, updates: Mapping[str, Any], nl: str) -> str:
    lines = [f"{META_KEY}:"]
    for name, new in updates.items():
        lines.extend(" " * DEFAULT_STEP + line for line in _dump_lines(name, new, DEFAULT_STEP))
    prefix = "" if not src or src.endswith(("\n", "\r")) else nl
    return src + prefix + _indent(lines, 0, nl)


def _block(src: str, key: Node, value: Node) -> _Block | None:
    if isinstance(value, ScalarNode) and str(value.tag).endswith(":null") and not value.value:
        step = DEFAULT_STEP
        return _Block({}, key.start_mark.column + step, step, _line_end(src, key.end_mark.index))
    if not isinstance(value, MappingNode) or value.flow_style or not value.value:
        return None
    if not all(isinstance(k, ScalarNode) for k, _ in value.value):
        return None
    entries = {str(k.value): (k, v) for k, v in value.value}
    if len(entries) != len(value.value):
        return None
    column = value.value[0][0].start_mark.column
    step = column - key.start_mark.column or DEFAULT_STEP
    return _Block(entries, column, step, _line_end(src, _content_end(src, value)))


def _meta_edits(src: str, block: _Block, updates: Mapping[str, Any], nl: str) -> list[_Edit]:
    edits: list[_Edit] = []
    added: list[str] = []
    for name, new in updates.items():
        if name in block.entries:
            key, value = block.entries[name]
            if new is None:
                edits.append(_remove_entry(src, key, value))
            else:
                edits.append(_replace_entry(src, key, value, new, block, nl))
        elif new is not None:
            added.extend(_dump_lines(name, new, block.step))
    if added:
        at = block.insert_at
        prefix = "" if not src or src[:at].endswith(("\n", "\r")) else nl
        edits.append(_Edit(at, at, prefix + _indent(added, block.column, nl)))
    return edits


def _replace_entry(src: str, key: Node, value: Node, new: Any, block: _Block, nl: str) -> _Edit:
    lines = _dump_lines(str(key.value), _styled(new, value), block.step)
    end = _entry_end(src, key, value)
    comment = _KEY_LINE_COMMENT.search(src[: _line_end(src, key.end_mark.index)].rstrip("\r\n"))
    if comment and _starts_block(value):
        # The key line is about to be rewritten; keep the user's note on it.
        lines[0] += comment.group(0)
    text = _indent(lines, block.column, nl)[block.column : -len(nl)]
    return _Edit(key.start_mark.index, end, text)


def _remove_entry(src: str, key: Node, value: Node) -> _Edit:
    end = _entry_end(src, key, value)
    return _Edit(_line_start(src, key.start_mark.index), _line_end(src, end), "")


def _entry_end(src: str, key: Node, value: Node) -> int:
    end = _content_end(src, value)
    if end >= key.end_mark.index:
        return end
    # An alias: the composed node is the anchored one, with the anchor's marks.
    alias = _ALIAS_AFTER_KEY.match(src, key.end_mark.index)
    if alias is None:
        raise _CannotEdit
    return alias.end()


def _content_end(src: str, node: Node) -> int:
    """Offset just past the last character that belongs to ``node``'s value."""
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):
        # Block scalar marks run on over trailing blank lines up to the next token.
        return len(src[: node.end_mark.index].rstrip())
    if isinstance(node, MappingNode) and not node.flow_style and node.value:
        return _entry_end(src, *node.value[-1])
    if isinstance(node, SequenceNode) and not node.flow_style and node.value:
        return _content_end(src, node.value[-1])
    return int(node.end_mark.index)


def _starts_block(value: Node) -> bool:
    """Whether the value starts on the lines after its key (a block collection or scalar)."""
    if isinstance(value, ScalarNode):
        return value.style in ("|", ">")
    return isinstance(value, MappingNode | SequenceNode) and not value.flow_style


def _line_end(src: str, pos: int) -> int:
    """Offset just past the line break of the line holding ``pos``."""
    match = LINE_BREAK.search(src, pos)
    return match.end() if match else len(src)


def _line_start(src: str, pos: int) -> int:
    return max(src.rfind("\n", 0, pos), src.rfind("\r", 0, pos)) + 1


def _dump_lines(key: str, value: Any, step: int) -> list[str]:
    """``key: value`` as block YAML lines (nested lines indented relative to the key)."""
    return _dump({key: value}, step).splitlines()


def _styled(value: Any, old: Node) -> Any:
    """Keep the user's quote style when a quoted string is replaced by another string."""
    style = old.style if isinstance(old, ScalarNode) else None
    if isinstance(value, str) and style == "'":
        return SingleQuotedScalarString(value)
    if isinstance(value, str) and style == '"':
        return DoubleQuotedScalarString(value)
    return value


# --- strategies 2 and 3: let ruamel re-dump the entry, or the whole frontmatter -----------------


def _updated(meta: Any, updates: Mapping[str, Any]) -> CommentedMap:
    """A fresh copy of ``meta`` with ``updates`` applied, in the same flow/block style."""
    fresh = CommentedMap()
    if isinstance(meta, CommentedMap):
        # A fresh map carries no comments, so none of them can be written out twice.
        if meta.fa.flow_style():
            fresh.fa.set_flow_style()
        fresh.update(meta)
    for name, new in updates.items():
        if new is None:
            fresh.pop(name, None)
        else:
            fresh[name] = new
    return fresh


def _quote_keeping_load(src: str) -> CommentedMap:
    yaml = new_yaml()
    yaml.preserve_quotes = True
    return root_mapping(yaml.load(src))


def _redump_entry(src: str, updates: Mapping[str, Any], nl: str) -> str:
    """Re-dump just the ``agentdoc`` entry, for shapes such as ``agentdoc: {session: x}``."""
    entry = _compose_meta(src)
    if entry is None:
        raise _CannotEdit
    key, value = entry
    end = _entry_end(src, key, value)
    meta = _updated(_quote_keeping_load(src).get(META_KEY), updates)
    lines = _dump({META_KEY: meta}, DEFAULT_STEP, keep_quotes=True).splitlines()
    column = key.start_mark.column
    return src[: key.start_mark.index] + _indent(lines, column, nl)[column : -len(nl)] + src[end:]


def _redump_all(src: str, updates: Mapping[str, Any], nl: str) -> str:
    """Last resort: load, change and re-dump the whole frontmatter (keeps comments, quotes)."""
    root = _quote_keeping_load(src)
    root[META_KEY] = _updated(root.get(META_KEY), updates)
    return LINE_BREAK.sub(nl, _dump(root, DEFAULT_STEP, keep_quotes=True))
