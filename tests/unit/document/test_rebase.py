"""A document saved from a copy older than agentdoc's last write keeps both sides' changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document.rebase import merge_document

BASE = """---
agentdoc: {}
---

# Chat

Some notes.

## User

first question
"""
OURS = BASE.replace("agentdoc: {}\n", "agentdoc: {}\nsession: 1c0e5d6a\n") + (
    "\n## Assistant\n\nthe answer\n\n## User\n\n"
)


@pytest.mark.parametrize(
    ("theirs", "expected"),
    [
        # The stale buffer saved unchanged: the reply stays.
        (BASE, OURS),
        # A note typed above, far from the reply.
        (BASE.replace("Some notes.\n", "Some notes.\nA new note.\n"), None),
        # A follow-up typed at the end, where the reply went: the reply first, then the text.
        (BASE + "\nmore words\n", OURS + "more words\n"),
        # The person's own `## User` heading: agentdoc's empty one is not kept twice.
        (BASE + "\n## User\n\nsecond question\n", OURS + "second question\n"),
        # A key the person added to the frontmatter.
        (BASE.replace("agentdoc: {}\n", "agentdoc: {}\nmodel: opus\n"), None),
    ],
)
def test_a_stale_copy_keeps_the_reply_and_the_persons_changes(
    theirs: str, expected: str | None
) -> None:
    merged = merge_document(BASE, OURS, theirs)
    assert merged.clean
    assert "the answer" in merged.text and "session: 1c0e5d6a" in merged.text
    if expected is not None:
        assert merged.text == expected
    for line in theirs.splitlines():
        assert line in merged.text.splitlines()


def test_a_removal_of_the_persons_is_applied_where_we_did_not_write() -> None:
    theirs = BASE.replace("Some notes.\n", "")
    merged = merge_document(BASE, OURS, theirs)
    assert merged.clean and "Some notes." not in merged.text and "the answer" in merged.text


def test_a_removal_that_meets_our_change_is_not_clean_and_loses_nothing() -> None:
    base = "# Chat\n\n## User\n\nfirst question\n"
    ours = "# Chat\n\n## User\n\nfirst question\n\n## Assistant\n\nthe answer\n"
    theirs = "# Chat\n\n## User\n\nfirst question, reworded\n"
    merged = merge_document(base, ours, theirs)
    assert "the answer" in merged.text and "first question, reworded" in merged.text
    conflicting = merge_document("a\nb\n", "a\nB\n", "a\n")
    assert not conflicting.clean and conflicting.text == "a\nB\n"


def test_nothing_to_merge() -> None:
    assert merge_document(BASE, BASE, "x\n").text == "x\n"
    assert merge_document(BASE, OURS, OURS).text == OURS


def test_which_saves_are_stale_copies() -> None:
    from agentdoc.daemon.stale import stale_merge

    typed = BASE + "\nmore words\n"
    # Made from the person's last save, lacking all we wrote since: merged.
    assert stale_merge([BASE], OURS, typed) is not None
    assert stale_merge([BASE], OURS, BASE) == merge_document(BASE, OURS, BASE)
    # Made from our write (it keeps a line of the reply): an ordinary save.
    assert stale_merge([BASE], OURS, OURS.replace("## User\n\n", "## User\n\nnext\n")) is None
    # Nothing of ours since the person's save, or no save known: nothing to merge.
    assert stale_merge([OURS], OURS, typed) is None
    assert stale_merge([], OURS, typed) is None
    assert stale_merge([BASE], None, typed) is None


def test_a_conflict_copy_with_a_prompt_merges_after_the_reply() -> None:
    from agentdoc.document import merge_copy

    streaming = BASE + (
        "\n## Assistant\n\n<!-- agentdoc:reply n1 (streaming; text you type between these "
        "markers is kept) -->\nthe ans\n"
    )
    phone = streaming + "\n## User\n\nfrom the phone\n"
    merged = merge_copy(OURS, phone)
    assert merged.clean
    assert merged.text == OURS + "from the phone\n"
    assert merge_copy(OURS, BASE).text == OURS


@pytest.mark.parametrize(
    ("copy_meta", "kept"),
    [
        ("agentdoc: {}\n", {"session": "1c0e5d6a"}),
        # A key only the copy's `agentdoc:` holds (set on the phone) is kept too.
        ("agentdoc: {model: opus}\n", {"session": "1c0e5d6a", "model": "opus"}),
    ],
)
def test_a_conflict_copy_from_before_the_session_leaves_one_readable_frontmatter(
    copy_meta: str, kept: dict[str, str]
) -> None:
    """The phone's copy was made before the first reply recorded the session: its frontmatter
    says `agentdoc: {}`, ours `agentdoc:` with the session under it. With no ancestor both lines
    were kept, `agentdoc` twice, and the document no longer parsed: its next prompt failed
    (seen with two real Syncthings under load)."""
    from agentdoc.document import merge_copy, parse
    from agentdoc.document.frontmatter import read_meta

    ours = "---\nagentdoc:\n  session: 1c0e5d6a\n---\n" + OURS.split("---\n", 2)[2]
    phone = BASE.replace("agentdoc: {}\n", copy_meta) + "\n## User\n\nfrom the phone\n"
    merged = merge_copy(ours, phone)
    assert read_meta(merged.text) == kept
    assert "the answer" in merged.text and "from the phone" in merged.text
    assert parse(merged.text).pending_prompt() == "from the phone"


def test_a_stale_save_that_landed_during_the_turn_keeps_what_was_typed_into_it(
    tmp_path: Path,
) -> None:
    """Plain Vim writes its buffer (without the reply) several times while the reply streams
    and once more as the turn ends: that last save was recorded among the person's saves when
    it landed, and must not serve as its own base, or the line typed into it is dropped."""
    from agentdoc.daemon.stale import rebase_save
    from agentdoc.daemon.state import DocState
    from agentdoc.document import WriteLedger

    path = tmp_path / "chat.md"
    earlier = BASE + "\ntyped while it streamed\n"
    last = earlier + "\ntyped as it ended\n"
    path.write_text(last)
    doc = DocState(queued_save=last)
    doc.saves.extend([BASE, earlier, last])
    ours = OURS.replace("first question\n", "first question\n\ntyped while it streamed\n")
    merged = rebase_save(path, doc, ours, last, last.encode(), WriteLedger())
    assert merged is not None
    assert "typed as it ended" in merged and "the answer" in merged
    assert path.read_text() == merged
