"""`classify` as a table: one version of a document and what the daemon knows of it in, the
decision out. Pure: no files, no threads, no clock (the snapshot values are built by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.config import Settings
from agentdoc.daemon.classify import (
    BulkChange,
    Decision,
    Forget,
    GitWrote,
    Held,
    Hint,
    Hold,
    Ignore,
    Known,
    Later,
    Mend,
    NoPrompt,
    Queue,
    Refuse,
    Remember,
    Stage,
    Submit,
    TakeOwn,
    classify,
    gated,
)
from agentdoc.daemon.snapshot import Snapshot
from agentdoc.document.splice import END, START

PATH = Path("chat.md")
HEAD = "---\nagentdoc: {}\n---\n\n"
ANSWERED = HEAD + "## User\n\nhi\n\n## Assistant\n\nhello\n\n"
ASKING = ANSWERED + "## User\n\nhow are you?\n"
AWAITING = ANSWERED + "## User\n\n"
OTHER_SESSION = ASKING.replace("agentdoc: {}", "agentdoc: {session: other}")
ANSWERED_SESSION = ANSWERED.replace("agentdoc: {}", "agentdoc: {session: first}")
TWO_NEW = HEAD + "## User\n\nhi\n\n## Assistant\n\nhello\n\n## User\n\na\n\n## Assistant\n\nb\n\n"
OPEN_REPLY = (
    ANSWERED
    + "## User\n\nq\n\n## Assistant\n\n"
    + f"{START.format(nonce='abc')}\npartial\n{END.format(nonce='abc')}\n"
)


def snap(text: str | None, **facts: object) -> Snapshot:
    return raw(None if text is None else text.encode(), **facts)


def raw(data: bytes | None, **facts: object) -> Snapshot:
    dig = None if data is None else f"d-{hash(data)}"
    return Snapshot(PATH, Settings(), data, dig, **facts)  # type: ignore[arg-type]


def known(stage: Stage = "save", **facts: object) -> Known:
    return Known(stage, **facts)  # type: ignore[arg-type]


ROWS: list[tuple[str, Known, Snapshot, Decision]] = [
    ("git holds the tree", known(), Snapshot(PATH, Settings(), git_busy=True), Later()),
    (
        "the running turn's own write",
        known(),
        Snapshot(PATH, Settings(), turn_stamp=True),
        Remember(),
    ),
    ("deleted", known(), snap(None), Forget()),
    ("agentdoc wrote these bytes", known(), snap(ASKING, own_content=True), Remember()),
    ("the version last handled", known(seen=snap(ASKING).digest), snap(ASKING), Remember()),
    ("a note without frontmatter", known(), snap("# notes\n"), Ignore("not a session document")),
    ("written by `agentdoc undo`", known(), snap(ASKING, own_command="undo"), TakeOwn("undo")),
    (
        "frontmatter without agentdoc",
        known(),
        snap("---\ntitle: x\n---\n\n## User\n\nq\n"),
        Refuse(None),
    ),
    (
        "a prompt saved while the turn runs",
        known(turn_running=True),
        snap(ASKING),
        Queue(prompt=True),
    ),
    (
        "an edit saved while the turn runs",
        known(turn_running=True),
        snap(ANSWERED),
        Queue(prompt=False),
    ),
    ("a reply left open", known(), snap(OPEN_REPLY), Mend()),
    ("a reply owed a close", known(owes=True), snap(ASKING), Mend()),
    ("nothing asked", known(), snap(ANSWERED), NoPrompt()),
    ("a heading waits for its prompt", known(), snap(AWAITING), Hint()),
    ("a typed prompt", known(previous=ANSWERED), snap(ASKING), Submit(False, "how are you?")),
    ("first sight of a pending prompt", known(), snap(ASKING), Submit(False, "how are you?")),
    ("git wrote the prompt", known(), snap(ASKING, git_wrote=True), Hold(GitWrote())),
    (
        "git's traces at start-up",
        known("found"),
        snap(ASKING, git_wrote=True),
        Submit(False, "how are you?"),
    ),
    (
        "after a turn's end: `archive` wrote it",
        known("recheck"),
        snap(ASKING, own_command="archive"),
        TakeOwn("archive"),
    ),
    ("after a turn's end: a prompt", known("recheck"), snap(ASKING), Submit(False, "how are you?")),
    ("after the mend: a prompt", known("mended"), snap(ASKING), Submit(False, "how are you?")),
]


@pytest.mark.parametrize(
    ("known_", "snapshot", "expected"),
    [r[1:] for r in ROWS],
    ids=[r[0] for r in ROWS],
)
def test_decision(known_: Known, snapshot: Snapshot, expected: Decision) -> None:
    assert classify(known_, snapshot) == expected


@pytest.mark.parametrize(
    ("previous", "text", "why"),
    [
        (TWO_NEW, ASKING, "turns disappeared"),
        (HEAD, TWO_NEW + "## User\n\nq\n", "several turns arrived at once"),
        (ANSWERED_SESSION, OTHER_SESSION, "its session id changed"),
        (ASKING, ASKING + "\n## User\n\nagain\n", None),
    ],
)
def test_bulk_changes_are_held(previous: str, text: str, why: str | None) -> None:
    decision = classify(known(previous=previous), snap(text))
    assert isinstance(decision, Hold)
    assert isinstance(decision.reason, BulkChange)
    if why is not None:
        assert why in decision.reason.why


def test_a_file_that_is_not_utf8_is_refused_with_why() -> None:
    decision = classify(known(), raw(b"---\nagentdoc: {}\n---\n\xff\n"))
    assert isinstance(decision, Refuse)
    assert decision.message is not None and "not valid UTF-8" in decision.message


def test_broken_frontmatter_is_refused_and_remembered() -> None:
    decision = classify(known(), snap("---\nagentdoc: {}\ntitle: [oops\n---\n"))
    assert isinstance(decision, Refuse)
    assert decision.refused and decision.message is not None
    assert "left alone" in decision.message


@pytest.mark.parametrize(
    ("stage", "noticed"), [("save", True), ("recheck", True), ("found", False)]
)
def test_unusable_settings_are_told_in_agentdocs_words(stage: Stage, noticed: bool) -> None:
    decision = classify(known(stage), snap(ASKING.replace("{}", "{effort: extreme}")))
    assert isinstance(decision, Refuse)
    assert decision.message is not None and "effort" in decision.message
    assert "Input should be" not in decision.message
    assert (decision.notice is not None) is noticed


def test_nothing_is_sent_below_a_reply_still_owed_a_close() -> None:
    assert isinstance(classify(known("mended", owes=True), snap(ASKING)), Ignore)


def test_the_snapshot_parses_once() -> None:
    version = snap(ASKING)
    assert version.document is version.document
    assert version.prompt == "how are you?"


SYNCED_ASKING = ASKING.replace("agentdoc: {}", "agentdoc: {git: sync}")


@pytest.mark.parametrize(
    ("stage", "text", "expected"),
    [
        # Git bringing the remote's commits in is how a prompt of a `git: sync` document
        # arrives; for any other document a version git wrote holds.
        ("save", ASKING, Hold(GitWrote())),
        ("save", SYNCED_ASKING, Submit(False, "how are you?")),
        ("pulled", ASKING, Submit(False, "how are you?")),
        ("released", ASKING, Submit(False, "how are you?")),
        ("merged", ASKING, Hold(GitWrote())),
    ],
)
def test_git_traces_hold_only_a_save(stage: Stage, text: str, expected: Decision) -> None:
    assert classify(known(stage), snap(text, git_wrote=True)) == expected


def test_a_merged_version_with_a_reply_left_open_is_mended_first() -> None:
    assert classify(known("merged"), snap(OPEN_REPLY)) == Mend()
    assert classify(known("merged", owes=True), snap(ASKING)) == Mend()


@pytest.mark.parametrize(
    ("decision", "held", "expected"),
    [
        (Submit(False, "q"), None, Submit(False, "q")),
        (Submit(False, "q"), Held("not trusted", "trust"), Hold(Held("not trusted", "trust"))),
        (NoPrompt(), Held("over budget", "budget"), NoPrompt()),
        (Hold(GitWrote()), Held("claimed", "owner"), Hold(GitWrote())),
    ],
)
def test_the_gate_holds_only_a_prompt_about_to_be_sent(
    decision: Decision, held: Held | None, expected: Decision
) -> None:
    assert gated(decision, held) == expected
