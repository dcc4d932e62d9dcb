"""git rewriting the watched tree is not a prompt: the rule, and a real repository."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import pytest

from agentdoc.daemon.bulk import judge
from agentdoc.daemon.synced.gitguard import git_busy, written_by_git
from agentdoc.document import parser as document
from tests.support.daemon import DOC, Running, make_daemon, roles, state_of
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

SID = "1c0e5d6a-1111-4222-8333-444455556666"
OTHER = "2d1f6e7b-1111-4222-8333-444455556666"


# What a turn that failed before any reply text leaves in its `## Assistant` block.
NOTICE = "<!-- agentdoc:unanswered -->\n\n> [!WARNING]\n> Claude could not answer: overloaded"


def _doc(*turns: str, session: str | None = None) -> document.Document:
    meta = f"agentdoc: {{session: {session}}}" if session else "agentdoc: {}"
    body = "".join(
        f"## {'User' if i % 2 == 0 else 'Assistant'}\n\n{text}\n\n" for i, text in enumerate(turns)
    )
    return document.parse(f"---\n{meta}\n---\n\n{body}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git work tree on branch main, with no commit yet."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    return path


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        # A typed prompt under the empty heading our reply left.
        (_doc("q1", "a1", "", session=SID), _doc("q1", "a1", "q2", session=SID), "send"),
        # A first prompt in a new document.
        (_doc(""), _doc("q1"), "send"),
        # Earlier turns edited together with the new prompt (sent with a diff of the edits).
        (_doc("q1", "a1", "", session=SID), _doc("q1!", "a1", "q2", session=SID), "send"),
        # A heading and prompt typed below a reply that had none.
        (_doc("q1", "a1", session=SID), _doc("q1", "a1", "q2", session=SID), "send"),
        # Our first reply set the session id; the save also carries the next prompt.
        (_doc("q1", "a1"), _doc("q1", "a1", "q2", session=SID), "send"),
        # A prompt left pending by a failed turn, saved again (PRODUCT.md promise 8).
        (_doc("q1"), _doc("q1"), "send"),
        # ... with its failure notice deleted, as the notice suggests, or left in place.
        (_doc("q1", NOTICE), _doc("q1"), "send"),
        (_doc("q1", NOTICE), _doc("q1!", NOTICE), "send"),
        (_doc("q1", "a1", "q2", NOTICE, session=SID), _doc("q1", "a1", "q2", session=SID), "send"),
        (None, _doc("q1"), "send"),
        # `git checkout` of an older commit: answered turns disappear.
        (
            _doc("q1", "a1", "q2", "a2", "", session=SID),
            _doc("q1", "a1", "q2", session=SID),
            "bulk",
        ),
        (_doc("q1", "a1", "", session=SID), _doc("q1"), "bulk"),
        (_doc("q1", "a1", "", session=SID), _doc("q1", "a1", "q2"), "bulk"),
        # `git pull`: someone else's reply and their next prompt arrive at once.
        (
            _doc("q1", "a1", "", session=SID),
            _doc("q1", "a1", "q2", "a2", "q3", session=SID),
            "bulk",
        ),
        # A different conversation came back (another session id).
        (_doc("q1", "a1", "", session=SID), _doc("q1", "a1", "q2", session=OTHER), "bulk"),
        # A second prompt below one still pending.
        (_doc("q1", "a1", "q2"), _doc("q1", "a1", "q2", "x", "q3"), "bulk"),
    ],
)
def test_the_rule(before: document.Document | None, after: document.Document, verdict: str) -> None:
    assert judge(before, after).verdict == verdict


def git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_index_lock_says_git_is_busy(tmp_path: Path) -> None:
    assert git(tmp_path, "init", "-q").returncode == 0
    doc = tmp_path / "sub" / "chat.md"
    doc.parent.mkdir()
    doc.write_text(DOC)
    assert not git_busy(doc)
    (tmp_path / ".git" / "index.lock").write_text("")
    assert git_busy(doc)
    assert not git_busy(tmp_path.parent / "elsewhere.md")


def test_a_checkout_of_an_older_commit_sends_nothing_and_git_can_switch_back(
    caplog: pytest.LogCaptureFixture, plain_claude: FakeClaude, repo: Path
) -> None:
    doc = repo / "chat.md"
    doc.write_text(DOC + "first\n")
    git(repo, "add", "chat.md")
    git(repo, "commit", "-qm", "a question")  # the prompt is pending in this commit
    caplog.set_level(logging.INFO)
    with Running(make_daemon(repo, plain_claude)) as daemon:
        doc.write_text(DOC + "first, please\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        wait_for(lambda: state_of(doc) == "idle", what="status idle")
        git(repo, "commit", "-qam", "answered")
        assert len(plain_claude.calls()) == 1

        checkout = git(repo, "checkout", "-q", "HEAD~1")
        assert checkout.returncode == 0, checkout.stderr
        assert roles(doc) == ["user"]  # the old, already answered prompt is back
        wait_for(lambda: "changed in bulk" in caplog.text, what="the daemon told, not sent")

        back = git(repo, "checkout", "-q", "main")
        assert back.returncode == 0, back.stderr  # nothing was written into the checkout
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"])
        # The user types a while later: once the daemon has seen the switched-back version.
        seen = doc.read_text()
        wait_for(lambda: daemon._docs[doc].text == seen, what="the daemon saw main again")
        # A prompt the user types afterwards is sent as usual.
        doc.write_text(doc.read_text() + "second\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the second reply")
    assert len(plain_claude.calls()) == 2
    assert plain_claude.calls()[1]["stdin"].endswith("second")


def test_a_pulled_prompt_of_someone_else_is_not_sent(
    caplog: pytest.LogCaptureFixture, plain_claude: FakeClaude, repo: Path
) -> None:
    doc = repo / "chat.md"
    doc.write_text(DOC)
    git(repo, "add", "chat.md")
    git(repo, "commit", "-qm", "empty")
    # Someone else's branch: their prompt, pending, same structure as a typed one.
    git(repo, "checkout", "-qb", "theirs")
    doc.write_text(DOC + "their question\n")
    git(repo, "commit", "-qam", "their prompt")
    git(repo, "checkout", "-q", "main")
    caplog.set_level(logging.INFO)
    with Running(make_daemon(repo, plain_claude)):
        merge = git(repo, "merge", "-q", "--ff-only", "theirs")
        assert merge.returncode == 0, merge.stderr
        wait_for(lambda: "changed in bulk" in caplog.text, what="the daemon told, not sent")
    assert plain_claude.calls() == []
    assert git(repo, "status", "--porcelain", "--untracked-files=no").stdout == ""


def test_a_save_outside_any_git_move_is_not_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    doc = tmp_path / "chat.md"
    doc.write_text(DOC)
    head = tmp_path / ".git" / "HEAD"
    import os

    os.utime(head, (0, 0))  # the last move long ago
    assert not written_by_git(doc, doc.read_bytes())
