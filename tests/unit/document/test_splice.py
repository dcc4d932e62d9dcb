"""Putting reply text into the user's current document: open, find, fill, close and merge."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdoc.document import parser as document
from agentdoc.document import splice
from agentdoc.document.merge import merge_text
from agentdoc.document.seal import seal_reply
from agentdoc.document.splice import close_region, fill_region, find_region, open_reply

N = "abcd1234"
START = splice.START.format(nonce=N)
END = splice.END.format(nonce=N)
HEAD = "---\nagentdoc: {}\n---\n\n## User\n\n"
EMPTY = f"## Assistant\n\n{START}\n{END}\n"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def opened(prompt: str = "hi\n") -> str:
    text = HEAD + prompt
    return open_reply(text, len(text), N)


def streamed(*bodies: str, prompt: str = "hi\n") -> str:
    """The document after the runner flushed `bodies` one after another."""
    text, last = opened(prompt), ""
    for body in bodies:
        new = fill_region(text, N, body, last)
        assert new is not None
        text, last = new, body
    return text


def before_end(text: str, typed: str) -> str:
    """`text` with `typed` typed just before the end marker."""
    region = find_region(text, N)
    assert region is not None
    return text[: region.content_end] + typed + text[region.content_end :]


def region_of(text: str) -> str:
    region = find_region(text, N)
    assert region is not None
    return text[region.content_start : region.content_end]


def end_line(text: str) -> str:
    region = find_region(text, N)
    assert region is not None
    return text[region.content_end : region.end]


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


# --- open_reply --------------------------------------------------------------------------------

OPEN_CASES = [
    ("LF", HEAD + "hi\n", None, HEAD + "hi\n\n" + EMPTY),
    ("CRLF", crlf(HEAD + "hi\n"), None, crlf(HEAD + "hi\n\n" + EMPTY)),
    ("no final newline", HEAD + "hi", None, HEAD + "hi\n\n" + EMPTY),
    ("blank line already there", HEAD + "hi\n\n", None, HEAD + "hi\n\n" + EMPTY),
    ("more blank lines are kept", HEAD + "hi\n\n\n", None, HEAD + "hi\n\n\n" + EMPTY),
    ("empty document", "", None, EMPTY),
    ("only blank lines", "\n\n", None, "\n\n" + EMPTY),
    (
        "text after the insert point",
        HEAD + "hi\nlater\n",
        len(HEAD) + 3,
        HEAD + "hi\n\n" + EMPTY + "\nlater\n",
    ),
    (
        "blank line after the insert point",
        HEAD + "hi\n\nlater\n",
        len(HEAD) + 3,
        HEAD + "hi\n\n" + EMPTY + "\nlater\n",
    ),
    (
        "mid-line insert point",
        HEAD + "hi there\n",
        len(HEAD) + 2,
        HEAD + "hi\n\n" + EMPTY + "\n there\n",
    ),
]


@pytest.mark.parametrize(
    ("text", "at", "expected"), [c[1:] for c in OPEN_CASES], ids=[c[0] for c in OPEN_CASES]
)
def test_open_reply(text: str, at: int | None, expected: str) -> None:
    result = open_reply(text, len(text) if at is None else at, N)
    assert result == expected
    # Normalising blank lines only ever adds: the user's text is all still there, in order.
    assert is_subsequence(text, result)


def test_open_reply_puts_the_heading_after_the_prompt() -> None:
    turns = document.parse(opened("hi\n")).turns
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[0].content.strip() == "hi"


# --- find_region -------------------------------------------------------------------------------

OTHER_START = splice.START.format(nonce="00000000")
OTHER_END = splice.END.format(nonce="00000000")
FIND_CASES = [
    ("plain", f"{START}\nbody\n{END}\n", "body\n", None),
    (
        "written end marker names its write",
        f"{START}\nbody\n<!-- agentdoc:end {N} 0a1b2c3d -->\n",
        "body\n",
        "0a1b2c3d",
    ),
    ("other nonce ignored", f"{OTHER_START}\nx\n{OTHER_END}\n", None, None),
    (
        "forged end inside the reply",
        f"{START}\nsee {OTHER_END} here\n{END}\n",
        f"see {OTHER_END} here\n",
        None,
    ),
    ("forged markers before ours", f"{OTHER_START}\n{OTHER_END}\n{START}\nb\n{END}\n", "b\n", None),
    (
        "end marker with a mangled version",
        f"{START}\nb\n<!-- agentdoc:end {N} zz -->\n",
        None,
        None,
    ),
    ("end before start", f"{END}\n{START}\nb\n", None, None),
    ("start deleted", f"b\n{END}\n", None, None),
    ("end deleted", f"{START}\nb\n", None, None),
    ("start marker edited", START.replace("reply", "repl") + f"\nb\n{END}\n", None, None),
    ("no newline after end", f"{START}\nb\n{END}", "b\n", None),
]


@pytest.mark.parametrize(
    ("text", "content", "version"), [c[1:] for c in FIND_CASES], ids=[c[0] for c in FIND_CASES]
)
def test_find_region(text: str, content: str | None, version: str | None) -> None:
    region = find_region(text, N)
    if content is None:
        assert region is None
        return
    assert region is not None
    assert text[region.content_start : region.content_end] == content
    assert text[region.start :].startswith(START)
    assert text[region.content_end : region.marker_end].startswith("<!-- agentdoc:end")
    assert region.version == version


def test_model_text_cannot_end_the_region_early() -> None:
    # The nonce is per turn and random, so a reply quoting marker comments stays inside.
    body = f"{OTHER_END}\n<!-- agentdoc:end -->\n{START.replace(N, 'ffffffff')}\n"
    text = streamed(body)
    assert region_of(text) == body


# --- fill_region -------------------------------------------------------------------------------

FILL_CASES = [
    # (name, on disk before our write, last body, new body, expected region content)
    ("first write", opened(), "", "Hello", "Hello\n"),
    ("plain replace", streamed("Hello"), "Hello", "Hello world", "Hello world\n"),
    (
        "body ending in a newline",
        streamed("Hello"),
        "Hello",
        "Hello\n\nworld\n",
        "Hello\n\nworld\n",
    ),
    (
        "user typed in the middle",
        streamed("Hello").replace("Hello", "HeXllo"),
        "Hello",
        "Hello world",
        "HeXllo world\n",
    ),
    (
        "user typed at the end",
        before_end(streamed("Hello"), "NOTE "),
        "Hello",
        "Hello world",
        "Hello world\nNOTE ",
    ),
    (
        "user typed a line at the end",
        before_end(streamed("Hello"), "NOTE\n"),
        "Hello",
        "Hello world",
        "Hello world\nNOTE\n",
    ),
    (
        "user typed at the start",
        streamed("Hello").replace("Hello", "NOTE Hello"),
        "Hello",
        "Hello world",
        "NOTE Hello world\n",
    ),
    (
        "user deleted reply text",
        streamed("Hello world").replace("world", ""),
        "Hello world",
        "Hello world!",
        "Hello world!\n",
    ),
    (
        "user deleted the whole reply",
        streamed("Hello world").replace("Hello world\n", ""),
        "Hello world",
        "Hello world!",
        "Hello world!\n",
    ),
    (
        "unchanged body restores a deletion",
        streamed("Hello world").replace("world", ""),
        "Hello world",
        "Hello world",
        "Hello world\n",
    ),
    (
        "reply rolled back",
        streamed("abandoned").replace("abandoned", "abandoned NOTE"),
        "abandoned",
        "",
        " NOTE",
    ),
    ("CRLF document", crlf(opened()), "", "a\nb", "a\r\nb\r\n"),
]


@pytest.mark.parametrize(
    ("text", "last", "body", "content"), [c[1:] for c in FILL_CASES], ids=[c[0] for c in FILL_CASES]
)
def test_fill_region(text: str, last: str, body: str, content: str) -> None:
    result = fill_region(text, N, body, last)
    assert result is not None
    assert region_of(result) == content
    region = find_region(text, N)
    assert region is not None
    # Nothing outside the region changes.
    assert result.startswith(text[: region.content_start])
    assert document.parse(result).turns[1].role == "assistant"


@pytest.mark.parametrize(
    "text",
    [
        HEAD + "hi\n",
        streamed("x").replace(START, ""),
        streamed("x").replace(end_line(streamed("x")), ""),
    ],
    ids=["never opened", "start marker deleted", "end marker deleted"],
)
def test_fill_and_close_return_none_without_the_markers(text: str) -> None:
    assert fill_region(text, N, "y", "x") is None
    assert close_region(text, N, "y", "x") is None


def test_fill_keeps_what_the_user_typed_after_the_end_marker() -> None:
    text = streamed("Hello")
    text = text.replace(end_line(text), end_line(text).replace("\n", " NOTE\n"))
    result = fill_region(text, N, "Hello world", "Hello")
    assert result is not None
    assert end_line(result).endswith(" NOTE\n")


def test_fill_names_the_write_in_the_end_marker() -> None:
    one, two = streamed("Hello"), streamed("Hello", "Hello world")
    one_region, two_region = find_region(one, N), find_region(two, N)
    assert one_region is not None and two_region is not None
    assert one_region.version is not None and two_region.version is not None
    assert one_region.version != two_region.version


def stale_copy() -> tuple[str, list[str]]:
    """An editor saved a copy loaded two writes ago, with a word typed at its end."""
    bodies = ["```py\nx = 1", "```py\nx = 1\ny = 2", "```py\nx = 1\ny = 2\n```\nDone"]
    rendered = [seal_reply(b) for b in bodies]
    old = streamed(*rendered[:1])
    saved = old.replace(end_line(old), "NOTE\n" + end_line(old))
    return saved, rendered


def test_a_stale_copy_is_merged_against_the_write_it_was_made_from() -> None:
    saved, (first, second, third) = stale_copy()
    result = fill_region(saved, N, third, second, [first])
    assert result is not None
    assert region_of(result) == third + "\nNOTE\n"


def test_without_the_earlier_writes_a_stale_copy_still_keeps_reply_and_typing() -> None:
    # The old copy's own fence closer is then taken for the user's typing: nothing is lost,
    # but it is kept once too often.
    saved, (_first, second, third) = stale_copy()
    result = fill_region(saved, N, third, second)
    assert result is not None
    assert is_subsequence(third, region_of(result))
    assert "NOTE" in region_of(result)


def test_a_copy_from_before_the_first_write_is_merged_against_the_empty_region() -> None:
    saved = opened().replace(END, "NOTE\n" + END)
    result = fill_region(saved, N, "Hello world", "Hello", [""])
    assert result is not None
    assert region_of(result) == "Hello world\nNOTE\n"


def test_a_region_closed_from_its_own_content_has_it_once() -> None:
    # Crash recovery closes a region nobody owns, passing what is in it as the last write.
    for text in (streamed("partial"), before_end(opened(), "typed\n")):
        partial = region_of(text).rstrip("\n")
        closed = close_region(text, N, f"{partial}\n\n(interrupted)", partial)
        assert closed is not None
        assert closed.count(partial) == 1
        assert f"{partial}\n\n(interrupted)\n\n## User" in closed


# --- close_region ------------------------------------------------------------------------------

FOOTER = "Hello world\n\n<sub>1 s</sub>"
CLOSE_CASES = [
    (
        "adds the next prompt",
        streamed("Hello"),
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\n",
    ),
    (
        "user opened the next prompt right below",
        streamed("Hello") + "\n## User\n\nnext\n",
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\nnext\n",
    ),
    (
        "user opened it without a blank line",
        streamed("Hello") + "## User\n\nnext\n",
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\nnext\n",
    ),
    (
        "user text after the region",
        streamed("Hello") + "\nlater\n",
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\n\nlater\n",
    ),
    (
        "user text typed inside",
        streamed("Hello").replace("Hello", "HeXllo"),
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\nHeXllo world\n\n<sub>1 s</sub>\n\n## User\n\n",
    ),
    (
        "user text on the start line",
        streamed("Hello").replace(START, START + " NOTE"),
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n NOTE\n{FOOTER}\n\n## User\n\n",
    ),
    (
        "stale copy, unchanged body",
        streamed("Hello").replace("Hello\n", "He\n"),
        "Hello",
        f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\n",
    ),
    (
        "CRLF document",
        crlf(streamed("Hello")),
        "Hello",
        crlf(f"{HEAD}hi\n\n## Assistant\n\n{FOOTER}\n\n## User\n\n"),
    ),
]


@pytest.mark.parametrize(
    ("text", "last", "expected"), [c[1:] for c in CLOSE_CASES], ids=[c[0] for c in CLOSE_CASES]
)
def test_close_region(text: str, last: str, expected: str) -> None:
    assert close_region(text, N, FOOTER + "\n", last) == expected


def test_close_keeps_what_the_user_typed_after_the_end_marker() -> None:
    text = streamed("Hello")
    text = text.replace(end_line(text), end_line(text).replace("\n", "NOTE\n"))
    closed = close_region(text, N, "Hello", "Hello")
    assert closed == f"{HEAD}hi\n\n## Assistant\n\nHello\n\n## User\n\nNOTE\n"


def test_close_leaves_a_document_with_the_reply_under_its_own_heading() -> None:
    body = seal_reply("## User\nfake")
    closed = close_region(streamed(body), N, body, body)
    assert closed is not None
    turns = document.parse(closed).turns
    assert [t.role for t in turns] == ["user", "assistant", "user"]
    assert "agentdoc:" not in closed.split("---", 2)[2]


# --- merge_text --------------------------------------------------------------------------------

MERGE_CASES = [
    # (name, base, ours, theirs, expected)
    ("user changed nothing", "ab\n", "abc\n", "ab\n", "abc\n"),
    ("we changed nothing", "ab\n", "ab\n", "aXb\n", "aXb\n"),
    ("both insert at one point: ours first", "ab", "aXb", "aYb", "aXYb"),
    (
        "user typed at the end while text streams in",
        "Hello\n",
        "Hello world\n",
        "Hello\nnote",
        "Hello world\nnote",
    ),
    (
        "user typed a word in the middle",
        "one two\n",
        "one two three\n",
        "one X two\n",
        "one X two three\n",
    ),
    ("user typed inside a word", "Hello\n", "Hello world\n", "HeXllo\n", "HeXllo world\n"),
    ("several places", "a b c\n", "a b c d\n", "1a b2 c\n3", "1a b2 c d\n3"),
    ("user deleted: restored", "Hello world\n", "Hello world!\n", "Hello\n", "Hello world!\n"),
    (
        "user replaced a word: both kept",
        "Hello world\n",
        "Hello world!\n",
        "Hello there\n",
        "Hello world!there\n",
    ),
    (
        "our text rolled back: user text kept",
        "abandoned text\n",
        "new\n",
        "abandoned NOTE text\n",
        "newNOTE \n",
    ),
    ("our text emptied", "abandoned\n", "", "abandoned\nNOTE\n", "NOTE\n"),
    (
        "an escape stays on its line",
        "## Use\n",
        "\\## User\n",
        "NOTE\n## Use\n",
        "NOTE\n\\## User\n",
    ),
    (
        "a closer moves down past the user's line",
        "```\nx\n```\n",
        "```\nx\ny\n```\n",
        "```\nx\nNOTE\n```\n",
        "```\nx\ny\nNOTE\n```\n",
    ),
    (
        "repeated characters are not doubled",
        "```py\n",
        "```py\nx\n",
        "`A ``B py\n",
        "`A ``B py\nx\n",
    ),
    ("a typed word sharing a letter is not split", "r\n", "reply\n", "Xr Yr\n", "Xr Yreply\n"),
    ("a typed line ends with its own break", "a\nb\n", "a\nb c\n", "a\nX\nb\n", "a\nX\nb c\n"),
    ("unicode", "漢字 🙂\n", "漢字 🙂 かな\n", "漢X字 🙂\n", "漢X字 🙂 かな\n"),
    (
        "repeated text",
        "[a](u) [a](u) [a](u\n",
        "[a](u) [a](u) [a](u)\n",
        "[a](X u) [Y a](u) [a](Zu\n",
        "[a](X u) [Y a](u) [a](Zu)\n",
    ),
    (
        "repeated lines",
        "<!-- n -->\n<!-- n -->\n<!-- n -->\n",
        "<!-- n -->\n<!-- n -->\n<!-- n -->\nmore\n",
        "<!-- n -->\n<X !-- n -->\n<!-- n -->\nY\n",
        "<!-- n -->\n<X !-- n -->\n<!-- n -->\nmore\nY\n",
    ),
]


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "expected"),
    [c[1:] for c in MERGE_CASES],
    ids=[c[0] for c in MERGE_CASES],
)
def test_merge_text(base: str, ours: str, theirs: str, expected: str) -> None:
    merged = merge_text(base, ours, theirs)
    assert merged == expected
    # Whatever the case, ours is all there, in order.
    assert is_subsequence(ours, merged)


def test_merge_of_a_long_region_with_repeated_lines_keeps_both_sides_once() -> None:
    # Long enough to be aligned line by line first; the user typed into one of three equal lines.
    lines = [f"line {i} of the reply, with some words in it\n" for i in range(12)]
    base = "".join(lines) + "<!-- note -->\n" * 3 + "".join(lines)
    theirs = base.replace("line 3 ", "line 3 A ", 1).replace(
        "<!-- note -->\n<!-- note -->", "<!-- note -->\n<B !-- note -->", 1
    )
    theirs = theirs.replace("line 9 of the reply, with some words in it", "C", 1) + "D\n"
    ours = base + "the end\n"
    merged = merge_text(base, ours, theirs)
    for typed in ("A ", "B ", "C", "D\n"):
        assert merged.count(typed) == 1
        merged = merged.replace(typed, "", 1)
    # What the user deleted (line 9) is ours and comes back; nothing of ours is doubled.
    assert merged == ours


# Found by the fuzz test: two equal fence lines, the user typing into the first and into lines
# all around; aligning lines by longest match paired our first fence line with the user's
# second one, and the merge then restored most of the reply next to the user's copy of it.
FUZZ_BASE = (
    "naïve x User > x é 👨‍👩‍👧\r\n\\ < Assistant\r\n````\r\nUser # 👨‍👩‍👧 | <\r\n"
    "a _it_ _it_ # naïve **bold** User\r\n### Notes\r\n**bold** x **bold** 🙂 * * 한국어 end\r\n"
    "> < * borrow because #\r\n**bold** <!-- **bold** User | 👨‍👩‍👧 &am\r\n````\r\n"
)
FUZZ_THEIRS = (
    "naïve x User > x é 👨‍👩‍§9:ee§ 👧\r\n\\ < Assista§5:b3§ nt\r\n````§6:2b§ \r\n"
    "User # 👨‍👩‍👧 | <\r\na _it_ _it_ # naïve **bold** User§10:0d§\r\n### Notes\r\n"
    "**bold** x **bold** 🙂 §16:uat§ * * 한국어 end\r\n> < * borrow because #\r\n"
    "**bold§15:c§ ** <!-- **bold** User | 👨‍👩‍👧 &am\r\n````\r\n§3:b§§11:0§ §14:1sl§"
)


def test_merge_pairs_repeated_lines_with_the_users_copies() -> None:
    ours = FUZZ_BASE.replace("&am\r\n", "&amp;\r\n")
    merged = merge_text(FUZZ_BASE, ours, FUZZ_THEIRS)
    markers = re.findall("§[^§]*§", FUZZ_THEIRS)
    assert all(merged.count(marker) == 1 for marker in markers)
    without = re.sub("§[^§]*§", "", FUZZ_THEIRS).replace("&am\r\n", "&amp;\r\n")
    assert re.sub("§[^§]*§", "", merged) == without


@pytest.mark.parametrize(
    ("text", "newline"),
    [
        ("a\nb\n", "\n"),
        ("a\r\nb\r\n", "\r\n"),
        ("a\r\nb\n", "\n"),
        ("a\r\nb\r\nc\n", "\r\n"),
        ("", "\n"),
    ],
)
def test_newline_of(text: str, newline: str) -> None:
    assert splice.newline_of(text) == newline


@pytest.mark.parametrize(
    ("text", "newline", "expected"),
    [("a\nb", "\n", "a\nb"), ("a\nb", "\r\n", "a\r\nb"), ("a\r\nb\n", "\r\n", "a\r\nb\r\n")],
)
def test_with_newlines(text: str, newline: str, expected: str) -> None:
    assert splice.with_newlines(text, newline) == expected


def test_new_nonce_is_fresh_hex() -> None:
    nonces = {splice.new_nonce() for _ in range(50)}
    assert len(nonces) == 50
    assert all(len(n) == 8 and int(n, 16) >= 0 for n in nonces)


# -- the byte-level fast path ------------------------------------------------------------------

BODIES = st.text(alphabet=st.sampled_from("ab é\n`<>-#"), max_size=40)


@given(bodies=st.lists(BODIES, min_size=1, max_size=4), after=st.sampled_from(["", "tail\n"]))
@settings(max_examples=200, deadline=None)
def test_splicing_bytes_writes_what_fill_region_writes(bodies: list[str], after: str) -> None:
    """Whenever the region holds just our last write, the byte path gives the very bytes the
    text path gives; it is an optimisation, never a different result."""
    text, last = opened() + after, ""
    for body in bodies:
        expected = fill_region(text, N, body, last)
        spliced = splice.fill_region_bytes(text.encode(), N, body, last)
        assert expected is not None and spliced is not None
        assert spliced.whole() == expected.encode()
        assert spliced.unchanged == (expected == text)
        assert spliced.whole()[: spliced.start] == text.encode()[: spliced.start]
        text, last = expected, body


@pytest.mark.parametrize(
    ("text", "last", "why"),
    [
        (streamed("Hello").replace("Hello", "Hello, typed"), "Hello", "typed in the region"),
        (streamed("Hello"), "Hello world", "a copy of an older write"),
        (crlf(streamed("Hello")), "Hello", "CRLF line breaks"),
        (HEAD + "hi\n", "", "no region"),
        (opened().replace(END, ""), "", "no end marker"),
    ],
)
def test_splicing_bytes_leaves_the_rest_to_the_merge(text: str, last: str, why: str) -> None:
    assert splice.fill_region_bytes(text.encode(), N, "Hello world!", last) is None, why


def test_splicing_bytes_after_a_stale_copy_of_the_empty_region_needs_the_merge() -> None:
    """A copy saved before our first write has the unnamed end marker and an empty region:
    with a write of ours since, that is not what we wrote last."""
    assert splice.fill_region_bytes(opened().encode(), N, "more", "Hello") is None
