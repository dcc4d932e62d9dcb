"""The cached turn-heading scan finds exactly the headings a full markdown-it parse finds.

Documents are generated from the block constructs that decide whether a ``## User`` line is a
heading (fences, indented code, HTML blocks, lists, quotes, setext headings, CRLF); each is then
edited the ways a conversation changes (append, edit the last turn, edit anywhere) and the
incremental scan of the edited text is compared with a full parse of it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentdoc.document import headings, parse
from tests.support.documents import BLOCKS

documents = st.lists(st.sampled_from(BLOCKS), max_size=40).map("".join)


def crlf(text: str, use: bool) -> str:
    return text.replace("\n", "\r\n") if use else text


def reference(text: str) -> tuple[headings.Heading, ...]:
    return headings.full_scan(text)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    before=documents,
    tail=documents,
    cut=st.integers(min_value=0, max_value=10_000),
    edit=st.sampled_from(["append", "end", "anywhere"]),
    line_breaks=st.booleans(),
)
def test_incremental_scan_equals_a_full_parse(
    before: str, tail: str, cut: int, edit: str, line_breaks: bool
) -> None:
    headings.clear_cache()
    old = crlf(before, line_breaks)
    assert headings.scan(old) == reference(old)
    addition = crlf(tail, line_breaks)
    if edit == "append":
        new = old + addition
    elif edit == "end":
        at = max(0, len(old) - cut % (len(old) + 1) // 4)
        new = old[:at] + addition
    else:
        at = cut % (len(old) + 1)
        new = old[:at] + addition + old[at:]
    assert headings.scan(new) == reference(new)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # The heading line itself changed: the boundary is not reused.
        ("intro\n\n## User\n\nhi\n", "intro\n\n## Users\n\nhi\n"),
        # A fence opened before the last heading swallows it now.
        ("intro\n\n## User\n\nhi\n", "intro\n```\n## User\n\nhi\n"),
        # A list item opened right above it makes an indented heading its content.
        ("a\n\n  ## User\n\nhi\n", "- a\n  ## User\n\nhi\n"),
        # Appending a prompt after a reply.
        ("## User\n\nq\n\n## Assistant\n\nr\n", "## User\n\nq\n\n## Assistant\n\nr\n\n## User\n"),
        # A fence opened in the last turn runs to the end.
        ("## User\n\nq\n\n## Assistant\n\nr\n", "## User\n\nq\n\n## Assistant\n\n```\n## User\n"),
    ],
)
def test_an_edit_before_a_boundary_is_seen(before: str, after: str) -> None:
    headings.clear_cache()
    headings.scan(before)
    assert headings.scan(after) == reference(after)


def test_a_long_document_is_reparsed_only_from_its_last_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    headings.clear_cache()
    frontmatter = "---\nagentdoc: {}\n---\n\n# Notes\n\n"
    body = "".join(f"## User\n\nq{i}\n\n## Assistant\n\nr{i}\n\n" for i in range(300))
    first = parse(frontmatter + body + "## User\n\nnew question\n")
    seen: list[int] = []
    real = headings.parse_blocks

    def spy(markdown: str) -> list[object]:
        seen.append(len(markdown))
        return real(markdown)  # type: ignore[return-value]

    monkeypatch.setattr(headings, "parse_blocks", spy)
    second = parse(frontmatter + body + "## User\n\nnew question, edited\n")
    assert len(second.turns) == len(first.turns) == 601
    assert second.pending_prompt() == "new question, edited"
    assert seen and max(seen) < 100, "only the last turn should be parsed again"
