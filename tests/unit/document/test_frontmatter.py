"""Frontmatter split/read/edit: byte-exact round trips and useful errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from agentdoc.document.frontmatter import (
    FrontmatterError,
    dominant_newline,
    read_meta,
    split,
    to_plain,
)
from agentdoc.document.frontmatter_edit import add_frontmatter, set_meta

SID = "1c0e5d6a-2b3c-4d5e-8f90-0123456789ab"
SID2 = "9f8e7d6c-5b4a-4321-8fed-cba987654321"


# --- split ---------------------------------------------------------------------------------

SPLIT_CASES = [
    # (id, text, bom, newline, frontmatter, body)
    ("lf", "---\na: 1\n---\nbody\n", "", "\n", "a: 1\n", "body\n"),
    ("crlf", "---\r\na: 1\r\n---\r\nbody\r\n", "", "\r\n", "a: 1\r\n", "body\r\n"),
    ("bom", "\ufeff---\na: 1\n---\nb", "\ufeff", "\n", "a: 1\n", "b"),
    ("closing fence at eof", "---\na: 1\n---", "", "\n", "a: 1\n", ""),
    ("dots close", "---\na: 1\n...\nbody\n", "", "\n", "a: 1\n", "body\n"),
    ("empty", "---\n---\nbody\n", "", "\n", "", "body\n"),
    ("fence trailing blanks", "--- \na: 1\n---\t\nbody", "", "\n", "a: 1\n", "body"),
    ("no frontmatter", "# title\n---\n", "", "\n", None, "# title\n---\n"),
    ("unclosed", "---\na: 1\n", "", "\n", None, "---\na: 1\n"),
    ("four dashes is not a fence", "----\na: 1\n----\n", "", "\n", None, "----\na: 1\n----\n"),
    ("bom without frontmatter", "\ufeffhello", "\ufeff", "\n", None, "hello"),
    ("only an opening line", "---", "", "\n", None, "---"),
    ("mixed, mostly crlf", "---\r\na: 1\r\n---\nx\r\n", "", "\r\n", "a: 1\r\n", "x\r\n"),
]


@pytest.mark.parametrize(
    ("text", "bom", "newline", "yaml_text", "body"),
    [case[1:] for case in SPLIT_CASES],
    ids=[case[0] for case in SPLIT_CASES],
)
def test_split(text: str, bom: str, newline: str, yaml_text: str | None, body: str) -> None:
    parts = split(text)
    assert (parts.bom, parts.newline, parts.frontmatter, parts.body) == (
        bom,
        newline,
        yaml_text,
        body,
    )
    assert text[parts.body_offset :] == body


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", "\n"), ("a", "\n"), ("a\nb\r\n", "\n"), ("a\r\nb\r\nc\n", "\r\n"), ("a\r\n", "\r\n")],
)
def test_dominant_newline(text: str, expected: str) -> None:
    assert dominant_newline(text) == expected


# --- read_meta -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no frontmatter\n", None),
        ("---\ntitle: x\n---\n", None),
        ("---\n---\n", None),
        ("---\n# only a comment\n---\n", None),
        ("---\nagentdoc:\n---\n", {}),
        ("---\nagentdoc: {}\n---\n", {}),
        ("---\nagentdoc: {model: sonnet}\n---\n", {"model": "sonnet"}),
        (
            "---\nagentdoc:\n  thinking: false\n  forked_from:\n    turn: 3\n---\n",
            {"thinking": False, "forked_from": {"turn": 3}},
        ),
        ("---\nagentdoc:\n  model: 'sonnet'  # quoted\n---\n", {"model": "sonnet"}),
        ("---\nagentdoc:\n  x: 0x10\n  y: 1.5\n---\n", {"x": 16, "y": 1.5}),
    ],
)
def test_read_meta(text: str, expected: dict[str, Any] | None) -> None:
    meta = read_meta(text)
    assert meta == expected
    if meta is not None:
        # Plain python data, not ruamel's round-trip subclasses.
        assert all(type(v) in (str, int, float, bool, dict, list) for v in meta.values())


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("---\ntitle: x\nbad: [1, 2\n---\n", ["not valid YAML", "line 4"]),
        ("---\na: 1\n  b: 2\n---\n", ["not valid YAML", "line 3"]),
        ("---\nagentdoc: {}\nagentdoc: {}\n---\n", ["not valid YAML", "line 3"]),
        ("---\n- a\n- b\n---\n", ["must be a YAML mapping", "a list", "line 2"]),
        ("---\njust text\n---\n", ["must be a YAML mapping", "line 2"]),
        ("---\ntitle: x\nagentdoc: 3\n---\n", ["`agentdoc`", "mapping", "int", "line 3"]),
        ("---\nagentdoc:\n  - model\n---\n", ["`agentdoc`", "mapping", "a list", "line 2"]),
    ],
)
def test_bad_frontmatter_is_reported_with_its_line(text: str, fragments: list[str]) -> None:
    with pytest.raises(FrontmatterError) as excinfo:
        read_meta(text)
    for fragment in fragments:
        assert fragment in str(excinfo.value)
    with pytest.raises(FrontmatterError):
        set_meta(text, {"session": SID})


# --- set_meta: exact results ---------------------------------------------------------------

ROUND_TRIP_CASES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "add session after existing keys, unknown keys and comments untouched",
        "---\ntitle: 'Rust'   # kept\nagentdoc:  # marks it\n  model: sonnet\n# trailing\n"
        "z: [1,  2]\n---\n\n# T\n",
        {"session": SID},
        f"---\ntitle: 'Rust'   # kept\nagentdoc:  # marks it\n  model: sonnet\n  session: {SID}\n"
        "# trailing\nz: [1,  2]\n---\n\n# T\n",
    ),
    (
        "crlf, bom, no final newline",
        "\ufeff---\r\ntitle: x\r\nagentdoc:\r\n  model: sonnet\r\n---\r\nbody",
        {"session": SID},
        f"\ufeff---\r\ntitle: x\r\nagentdoc:\r\n  model: sonnet\r\n  session: {SID}\r\n---\r\nbody",
    ),
    (
        "replace keeps the inline comment",
        f"---\nagentdoc:\n  session: {SID}   # the session\n  model: opus # m\n---\n",
        {"session": SID2},
        f"---\nagentdoc:\n  session: {SID2}   # the session\n  model: opus # m\n---\n",
    ),
    (
        "replace keeps the quote style",
        '---\ntitle: "T"\nagentdoc:\n  model: "sonnet"\n  cwd: \'a b\'\n---\n',
        {"model": "opus", "cwd": "c d"},
        '---\ntitle: "T"\nagentdoc:\n  model: "opus"\n  cwd: \'c d\'\n---\n',
    ),
    (
        "remove a key with its comment",
        f"---\nagentdoc:\n  session: {SID}  # old\n  model: opus\n---\nx\n",
        {"session": None},
        "---\nagentdoc:\n  model: opus\n---\nx\n",
    ),
    (
        "remove the last key leaves an empty mapping",
        "---\nagentdoc:\n  model: opus\nother: 1\n---\n",
        {"model": None},
        "---\nagentdoc:\nother: 1\n---\n",
    ),
    (
        "nested mapping replaced, comment on its key kept",
        "---\nagentdoc:\n  forked_from:   # lineage\n    document: a.md\n    turn: 1\n\n"
        "  model: opus\n---\n",
        {"forked_from": {"document": "b.md", "session": SID, "turn": 2}},
        f"---\nagentdoc:\n  forked_from:   # lineage\n    document: b.md\n    session: {SID}\n"
        "    turn: 2\n\n  model: opus\n---\n",
    ),
    (
        "nested mapping added with the document's indentation",
        "---\nagentdoc:\n    model: opus\n---\n",
        {"forked_from": {"document": "a.md", "turn": 1}},
        "---\nagentdoc:\n    model: opus\n    forked_from:\n        document: a.md\n"
        "        turn: 1\n---\n",
    ),
    (
        "nested mapping removed",
        "---\nagentdoc:\n  forked_from:\n    document: a.md\n    turn: 1\n  model: opus\n---\n",
        {"forked_from": None},
        "---\nagentdoc:\n  model: opus\n---\n",
    ),
    (
        "block scalar replaced, following comment kept",
        "---\nagentdoc:\n  system: |\n    be terse\n\n    and kind\n\n  # note\n  model: x\n---\n",
        {"system": "be brief"},
        "---\nagentdoc:\n  system: be brief\n\n  # note\n  model: x\n---\n",
    ),
    (
        "empty agentdoc mapping filled",
        "---\ntitle: x\nagentdoc:   # on\nafter: 2\n---\n",
        {"session": SID},
        f"---\ntitle: x\nagentdoc:   # on\n  session: {SID}\nafter: 2\n---\n",
    ),
    (
        "agentdoc mapping created at the end",
        "---\ntitle: x  # t\n---\nbody\n",
        {"session": SID, "model": "sonnet"},
        f"---\ntitle: x  # t\nagentdoc:\n  session: {SID}\n  model: sonnet\n---\nbody\n",
    ),
    (
        "dots closing fence kept",
        "---\nagentdoc:\n  model: x\n...\nbody\n",
        {"session": SID},
        f"---\nagentdoc:\n  model: x\n  session: {SID}\n...\nbody\n",
    ),
    (
        "empty frontmatter",
        "---\n---\nbody\n",
        {"session": SID},
        f"---\nagentdoc:\n  session: {SID}\n---\nbody\n",
    ),
    (
        "no frontmatter at all, crlf body",
        "# T\r\n\r\n## User\r\n",
        {"model": "sonnet"},
        "---\r\nagentdoc:\r\n  model: sonnet\r\n---\r\n# T\r\n\r\n## User\r\n",
    ),
    (
        "strings that need quoting are quoted",
        "---\nagentdoc:\n  model: x\n---\n",
        {"system": "a: b # c", "cwd": "-x"},
        "---\nagentdoc:\n  model: x\n  system: 'a: b # c'\n  cwd: -x\n---\n",
    ),
    (
        "no-op update leaves the text alone",
        f"---\nagentdoc: {{session: '{SID}'}}\n---\n",
        {"session": SID, "model": None},
        f"---\nagentdoc: {{session: '{SID}'}}\n---\n",
    ),
    (
        "removing from a non-session document does not opt it in",
        "---\ntitle: x\n---\n",
        {"session": None},
        "---\ntitle: x\n---\n",
    ),
    (
        "removing without frontmatter changes nothing",
        "hello\n",
        {"session": None},
        "hello\n",
    ),
]


@pytest.mark.parametrize(
    ("before", "updates", "after"),
    [case[1:] for case in ROUND_TRIP_CASES],
    ids=[case[0] for case in ROUND_TRIP_CASES],
)
def test_set_meta_exact(before: str, updates: dict[str, Any], after: str) -> None:
    assert set_meta(before, updates) == after


REDUMP_CASES = [
    (
        "flow style entry is re-dumped on its own line",
        "---\ntitle:   'Kept'  # c\nagentdoc: {model: 'sonnet'}  # flow\nlast: 1\n---\nbody\n",
        f"---\ntitle:   'Kept'  # c\nagentdoc: {{model: 'sonnet', session: {SID}}}  # flow\n"
        "last: 1\n---\nbody\n",
    ),
    (
        "explicit null",
        "---\nfirst:  [a]\nagentdoc: ~\nlast:  1\n---\n",
        f"---\nfirst:  [a]\nagentdoc:\n  session: {SID}\nlast:  1\n---\n",
    ),
    (
        "alias value",
        "---\nbase:   &m sonnet\nagentdoc:\n  model: *m\n  session: x\nz:   2\n---\n",
        f"---\nbase:   &m sonnet\nagentdoc:\n  model: *m\n  session: {SID}\nz:   2\n---\n",
    ),
]


@pytest.mark.parametrize(
    ("before", "after"),
    [case[1:] for case in REDUMP_CASES],
    ids=[case[0] for case in REDUMP_CASES],
)
def test_odd_shapes_redump_only_the_agentdoc_entry(before: str, after: str) -> None:
    assert set_meta(before, {"session": SID}) == after


@pytest.mark.parametrize(
    ("updates", "entry"),
    [({"model": "opus"}, "  model: opus  # alias\n"), ({"model": None}, "")],
)
def test_an_aliased_value_is_edited_in_place(updates: dict[str, Any], entry: str) -> None:
    before = "---\nbase:   &m sonnet\nagentdoc:\n  model: *m  # alias\nz:   2\n---\n"
    after = set_meta(before, updates)
    assert after == f"---\nbase:   &m sonnet\nagentdoc:\n{entry}z:   2\n---\n"


def test_flow_style_frontmatter_is_redumped_whole() -> None:
    after = set_meta("---\n{title: x, agentdoc: {model: s}}\n---\nbody\n", {"session": SID})
    assert read_meta(after) == {"model": "s", "session": SID}
    assert after.endswith("\n---\nbody\n")


VALUES: list[Any] = [
    SID,
    "sonnet",
    "yes",
    "null",
    "~",
    "#hash",
    "- dash",
    "multi\nline\n",
    "日本語 🎉",
    "'quotes' and \"quotes\"",
    "",
    7,
    True,
    1.5,
    {"document": "../a b.md", "session": SID, "turn": 3},
    ["x", {"y": 1}],
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize(
    "before",
    [
        "---\ntitle: x\n---\nbody\n",
        "---\nagentdoc:\n  key: old  # c\n  other: 1\n---\n",
        "---\nagentdoc:\n    key:\n        deep: 1\n---\n",
        "---\nagentdoc: {key: old}\n---\n",
        "\ufeff---\r\nagentdoc:\r\n  key: |\r\n    old\r\n---\r\n",
    ],
)
def test_set_then_read_returns_the_value(before: str, value: Any) -> None:
    after = set_meta(before, {"key": value})
    meta = read_meta(after)
    assert meta is not None
    assert meta["key"] == value
    assert split(after).bom == split(before).bom
    assert split(after).body == split(before).body
    assert read_meta(set_meta(after, {"key": None})) == {
        k: v for k, v in meta.items() if k != "key"
    }


def test_round_trip_through_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "chat.md"
    original = (
        "\ufeff---\r\ntitle: Ünïcode  # c\r\nagentdoc:\r\n  model: x\r\n---\r\n\r\n## User\r\n"
    )
    path.write_bytes(original.encode("utf-8"))
    text = path.read_bytes().decode("utf-8")
    path.write_bytes(set_meta(text, {"session": SID}).encode("utf-8"))
    edited = path.read_bytes()
    assert edited.startswith(b"\xef\xbb\xbf---\r\ntitle: \xc3\x9cn\xc3\xafcode  # c\r\n")
    assert edited.endswith(f"  session: {SID}\r\n---\r\n\r\n## User\r\n".encode())
    assert b"\n" not in edited.replace(b"\r\n", b"")


# --- add_frontmatter -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "extra", "expected"),
    [
        (
            "# Title\n\n## User\n\n",
            {"title": "Title"},
            "---\ntitle: Title\nagentdoc:\n  model: sonnet\n---\n# Title\n\n## User\n\n",
        ),
        ("", None, "---\nagentdoc:\n  model: sonnet\n---\n"),
        ("\ufeffx\r\n", None, "\ufeff---\r\nagentdoc:\r\n  model: sonnet\r\n---\r\nx\r\n"),
        (
            "x\n",
            {"title": "a: b", "agentdoc": "ignored"},
            "---\ntitle: 'a: b'\nagentdoc:\n  model: sonnet\n---\nx\n",
        ),
    ],
)
def test_add_frontmatter(body: str, extra: dict[str, Any] | None, expected: str) -> None:
    text = add_frontmatter(body, {"model": "sonnet"}, extra)
    assert text == expected
    assert read_meta(text) == {"model": "sonnet"}


# --- property: an edit touches only agentdoc lines -----------------------------------------

_KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: k != "agentdoc")
_WORDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ]{0,12}[A-Za-z0-9]", fullmatch=True)
_COMMENTS = st.from_regex(r"#[ -~]{0,20}", fullmatch=True)


@st.composite
def _unknown_lines(draw: st.DrawFn, used: set[str]) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        kinds = ["plain", "single", "double", "flow", "nested", "comment", "blank"]
        kind = draw(st.sampled_from(kinds))
        if kind == "comment":
            lines.append(draw(_COMMENTS))
            continue
        if kind == "blank":
            lines.append("")
            continue
        key = draw(_KEYS.filter(lambda k: k not in used))
        used.add(key)
        word = draw(_WORDS)
        value = {
            "plain": word,
            "single": f"'{word}'",
            "double": f'"{word}"',
            "flow": f"[{word}, 2]",
            "nested": f"\n  inner: {word}",
        }[kind]
        comment = draw(st.sampled_from(["", "  # c", " #x"]))
        lines.append(f"{key}: {value}{comment}")
    return lines


@st.composite
def _documents(draw: st.DrawFn) -> tuple[str, str, str, str]:
    """(text before the agentdoc block, the block, text after it, newline)."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    used: set[str] = set()
    before = draw(_unknown_lines(used))
    after = draw(_unknown_lines(used))
    indent = " " * draw(st.sampled_from([2, 4]))
    meta = ["agentdoc:" + draw(st.sampled_from(["", "  # mine"]))]
    if draw(st.booleans()):
        meta.append(f"{indent}session: {SID2}" + draw(st.sampled_from(["", " # sid"])))
    if draw(st.booleans()):
        meta.append(f"{indent}model: " + draw(st.sampled_from(["opus", "'opus'", '"opus"'])))
    if draw(st.booleans()):
        meta.append(f"{indent}system: |\n{indent}  be terse\n")
    bom = draw(st.sampled_from(["", "\ufeff"]))
    final = draw(st.sampled_from(["\n", ""]))
    head = bom + "---\n" + "".join(line + "\n" for line in before)
    tail = "".join(line + "\n" for line in after) + "---\n# Body" + final
    block = "\n".join(meta) + "\n"
    return (
        head.replace("\n", newline),
        block.replace("\n", newline),
        tail.replace("\n", newline),
        newline,
    )


@settings(max_examples=200, deadline=None)
@given(_documents())
def test_set_session_changes_only_agentdoc_lines(doc: tuple[str, str, str, str]) -> None:
    head, meta_block, tail, newline = doc
    text = head + meta_block + tail
    before_meta = read_meta(text)
    assert before_meta is not None
    after = set_meta(text, {"session": SID})
    assert after.startswith(head)
    assert after.endswith(tail)
    changed = after[len(head) : len(after) - len(tail)]
    assert changed.startswith(meta_block.split(newline)[0] + newline)
    assert read_meta(after) == {**before_meta, "session": SID}
    assert dominant_newline(after) == newline
    assert {k: v for k, v in _top_level(after).items() if k != "agentdoc"} == {
        k: v for k, v in _top_level(text).items() if k != "agentdoc"
    }


def _top_level(text: str) -> dict[str, Any]:
    yaml_text = split(text).frontmatter
    assert yaml_text is not None
    data: dict[str, Any] = to_plain(YAML(typ="rt").load(yaml_text) or {})
    return data
