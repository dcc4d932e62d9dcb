"""Sealing a streamed reply: the cheap pre-filters never change what the parser decides."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from agentdoc.document import headings, seal
from agentdoc.document.seal import seal_reply
from tests.support.documents import BLOCKS

EXTRA = ["\r", "1. ```\n", "> <div>\n", "  ~~~\n", "\t```\n", "text ``` not a fence\n", "<\n"]
texts = st.lists(st.sampled_from(BLOCKS + EXTRA), max_size=30).map("".join)
MATCH_ALL = re.compile("")


def _unfiltered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seal, "_MAYBE_TURN", MATCH_ALL)
    monkeypatch.setattr(seal, "_MAYBE_OPENER", MATCH_ALL)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts, line_breaks=st.sampled_from(["\n", "\r\n", "\r"]))
def test_sealing_with_pre_filters_equals_sealing_by_parse(
    monkeypatch: pytest.MonkeyPatch, text: str, line_breaks: str
) -> None:
    text = text.replace("\n", line_breaks)
    fast = seal_reply(text)
    with monkeypatch.context() as patched:
        _unfiltered(patched)
        assert seal_reply(text) == fast


@settings(max_examples=300)
@given(text=texts)
def test_block_only_parse_finds_the_headings_a_whole_parse_finds(text: str) -> None:
    whole = MarkdownIt("commonmark")
    found = [
        (token.map[0] if token.map else -1, inline.content)
        for token, inline in zip(whole.parse(text), whole.parse(text)[1:], strict=False)
        if token.type == "heading_open" and token.level == 0 and token.markup == "##"
    ]
    expected = [(line, content) for line, content in found if content in ("User", "Assistant")]
    assert [(h.line, h.role.title()) for h in headings.full_scan(text)] == expected


@pytest.mark.parametrize(
    "reply",
    [
        "Plain prose, a list:\n\n- one\n- two\n\nand `inline code`, *emphasis*.\n" * 50,
        "## Heading of the reply\n\n> a quote\n\n1. step\n" * 50,
    ],
)
def test_sealing_an_ordinary_reply_parses_nothing(
    monkeypatch: pytest.MonkeyPatch, reply: str
) -> None:
    parses: list[str] = []
    real = headings.parse_blocks

    def spy(markdown: str) -> list[object]:
        parses.append(markdown)
        return list(real(markdown))

    monkeypatch.setattr(headings, "parse_blocks", spy)
    assert seal_reply(reply) == reply
    assert parses == []
