"""`git: sync` merges the remote into a document without ever writing a conflict marker."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.turn.gitsync import behind, integrate, push
from tests.support.git import DOC, IDENTITY, git, make_repos, pulled


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path, Path]:
    return make_repos(tmp_path)


@pytest.fixture(autouse=True)
def _identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def test_both_sides_editing_the_same_line_merge_without_markers(
    repos: tuple[Path, Path, Path],
) -> None:
    _, desk, phone = repos
    (phone / "chat.md").write_text(DOC + "typed on the phone\n")
    git(phone, "commit", "--quiet", "-am", "phone")
    git(phone, "push", "--quiet")
    (desk / "chat.md").write_text(DOC + "typed on the desk\n")  # not even committed
    assert behind(desk) == 1
    assert integrate(desk / "chat.md") is None
    text = (desk / "chat.md").read_text()
    assert "<<<<<<<" not in text and "=======" not in text
    assert "typed on the phone" in text and "typed on the desk" in text
    assert behind(desk) == 0
    assert push(desk / "chat.md", "turn") is None
    assert "typed on the desk" in pulled(phone)


def test_a_conflict_in_another_file_is_left_to_the_person(
    repos: tuple[Path, Path, Path],
) -> None:
    _, desk, phone = repos
    for where, words in ((phone, "phone"), (desk, "desk")):
        (where / "notes.txt").write_text(f"{words}\n")
        git(where, "add", "notes.txt")
        git(where, "commit", "--quiet", "-m", words)
    git(phone, "push", "--quiet")
    why = integrate(desk / "chat.md")
    assert why is not None and "notes.txt" in why
    assert (desk / "notes.txt").read_text() == "desk\n"  # the merge was aborted
    assert not (desk / ".git" / "MERGE_HEAD").exists()
