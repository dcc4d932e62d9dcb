"""Find and read a document's YAML frontmatter without disturbing the bytes around it.

The frontmatter is the block between a first line ``---`` and the next ``---`` (or ``...``) line.
agentdoc owns only the ``agentdoc:`` mapping inside it; everything else (unknown keys, comments,
key order, quoting, indentation, BOM, line endings, the final newline) must survive every edit
byte for byte, which is :mod:`agentdoc.document.frontmatter_edit`'s job. The boundary is
decided here, once, so the settings and the turns can never disagree about where it ends.
"""

from __future__ import annotations

import copy
import functools
import logging
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import MarkedYAMLError, YAMLError

logger = logging.getLogger(__name__)

BOM = "\ufeff"
META_KEY = "agentdoc"
# markdown-it and YAML both treat a lone CR as a line break, so line arithmetic must too.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_OPEN_FENCE = re.compile(r"---[ \t]*")
_CLOSE_FENCE = re.compile(r"(?:---|\.\.\.)[ \t]*")
# The YAML text starts on the line after the opening fence: YAML line 0 is file line 2.
_FIRST_YAML_LINE = 2
DEFAULT_STEP = 2


class FrontmatterError(ValueError):
    """The frontmatter is not YAML agentdoc can work with; the message says what and where."""


@dataclass(frozen=True)
class Split:
    """A document cut into its frontmatter and its markdown body."""

    bom: str
    newline: str
    frontmatter: str | None
    body: str
    body_offset: int


def line_starts(text: str) -> list[int]:
    """Offsets where each line of ``text`` begins (a trailing break opens one last empty line)."""
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def dominant_newline(text: str) -> str:
    """``"\\r\\n"`` if most line breaks in ``text`` are CRLF, else ``"\\n"``."""
    if "\r" not in text:
        return "\n"  # the common case, found without counting a long document's lines
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line's start offset and content (without its break), lazily: the frontmatter is
    found in the first lines, and a long document should not be walked to the end for it."""
    start = 0
    for match in LINE_BREAK.finditer(text):
        yield start, text[start : match.start()]
        start = match.end()
    yield start, text[start:]


def locate(text: str) -> tuple[Split, int]:
    """Split ``text`` and also return the offset where the frontmatter text starts."""
    bom = BOM if text.startswith(BOM) else ""
    newline = dominant_newline(text)
    no_frontmatter = Split(bom, newline, None, text[len(bom) :], len(bom))
    lines = _lines(text)
    _, first = next(lines)
    if not _OPEN_FENCE.fullmatch(first[len(bom) :]):
        return no_frontmatter, -1
    yaml_start = -1
    for start, content in lines:
        if yaml_start < 0:
            yaml_start = start
        if _CLOSE_FENCE.fullmatch(content):
            end = LINE_BREAK.match(text, start + len(content))
            body_offset = end.end() if end else len(text)
            yaml_text = text[yaml_start:start]
            return Split(bom, newline, yaml_text, text[body_offset:], body_offset), yaml_start
    return no_frontmatter, -1


def split(text: str) -> Split:
    """Cut ``text`` into BOM, frontmatter (None if there is none) and body."""
    return locate(text)[0]


def new_yaml() -> YAML:
    # A fresh instance per call: YAML objects keep parser state and are not thread safe.
    yaml = YAML(typ="rt")
    yaml.width = 4096  # never re-wrap long values such as an appended system prompt
    return yaml


def _yaml_error(exc: YAMLError) -> FrontmatterError:
    where = ""
    if isinstance(exc, MarkedYAMLError) and exc.problem_mark is not None:
        where = f" at line {exc.problem_mark.line + _FIRST_YAML_LINE}"
    problem = exc.problem if isinstance(exc, MarkedYAMLError) and exc.problem else str(exc)
    return FrontmatterError(f"frontmatter is not valid YAML{where}: {problem}")


def load_yaml(yaml_text: str) -> Any:
    try:
        with warnings.catch_warnings():
            # ruamel warns about legal-but-odd YAML (reused anchors); not the user's problem here.
            warnings.simplefilter("ignore")
            return new_yaml().load(yaml_text)
    except YAMLError as exc:
        raise _yaml_error(exc) from exc
    except RecursionError as exc:
        raise FrontmatterError("frontmatter is nested too deeply to read") from exc


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    return "an empty value" if value is None else f"the {type(value).__name__} {value!r}"


def root_mapping(root: Any) -> CommentedMap:
    if root is None:
        return CommentedMap()
    if not isinstance(root, CommentedMap):
        raise FrontmatterError(
            f"frontmatter must be a YAML mapping (key: value lines), found {_kind(root)}"
            f" at line {_FIRST_YAML_LINE}"
        )
    return root


def meta_mapping(root: CommentedMap) -> CommentedMap | None:
    """The ``agentdoc`` mapping, None if absent; an empty ``agentdoc:`` counts as ``{}``."""
    if META_KEY not in root:
        return None
    meta = root[META_KEY]
    if meta is None:
        return CommentedMap()
    if not isinstance(meta, CommentedMap):
        line = root.lc.key(META_KEY)[0] + _FIRST_YAML_LINE
        raise FrontmatterError(
            f"`{META_KEY}` in the frontmatter must be a mapping of settings"
            f" (e.g. `{META_KEY}: {{model: sonnet}}`), found {_kind(meta)} at line {line}"
        )
    return meta


# YAML aliases can make a few lines expand into billions of nodes ("billion laughs").
MAX_PLAIN_NODES = 10_000


def to_plain(value: Any) -> Any:
    """Turn ruamel round-trip containers and scalar subclasses into plain python data."""
    budget = [MAX_PLAIN_NODES]
    try:
        return _plain(value, budget)
    except RecursionError as exc:
        raise FrontmatterError("frontmatter is nested too deeply to read") from exc


def _plain(value: Any, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise FrontmatterError(
            f"frontmatter expands to more than {MAX_PLAIN_NODES} values (YAML aliases?)"
        )
    if isinstance(value, Mapping):
        return {_plain_key(k, budget): _plain(v, budget) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v, budget) for v in value]
    for plain in (bool, str, int, float):
        if isinstance(value, plain):
            return plain(value)
    return value


def _plain_key(key: Any, budget: list[int]) -> Any:
    # YAML allows complex keys (`? [a, b]`); python dicts need hashable ones.
    plain = _plain(key, budget)
    return plain if not isinstance(plain, list | dict) else str(plain)


def read_meta(text: str) -> dict[str, Any] | None:
    """The ``agentdoc`` mapping as plain data; None if ``text`` is not a session document."""
    yaml_text = split(text).frontmatter
    if yaml_text is None:
        return None
    # A document's frontmatter rarely changes while its conversation grows, and a turn parses
    # the document several times: the YAML is loaded once per distinct frontmatter.
    return copy.deepcopy(_meta_of(yaml_text))


@functools.lru_cache(maxsize=64)
def _meta_of(yaml_text: str) -> dict[str, Any] | None:
    meta = meta_mapping(root_mapping(load_yaml(yaml_text)))
    return None if meta is None else to_plain(meta)


# --- editing ---------------------------------------------------------------------------------
