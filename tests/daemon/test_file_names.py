"""Any name the file system allows is a non-issue: shown with escapes where it cannot be shown
as it is, and never the reason a document (or the daemon) stops."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agentdoc.document import ownopens, shown_name, sidecar_link
from agentdoc.document.filenames import link_target
from agentdoc.records import Status, read_status, write_status
from agentdoc.records.status import all_statuses
from tests.support.fake_claude import FakeClaude
from tests.support.processes import (
    base_env,
    roles,
    run_cli,
    status_json,
    watching,
    write_config,
)
from tests.support.waiting import wait_for

NAMES = {
    "non-UTF-8": os.fsdecode(b"r\xe9sum\xe9-chat.md"),
    "newline": "two\nlines.md",
    "leading dash": "-rf.md",
    "long": "l" * 240 + ".md",
    "spaces and brackets": "my (old) [chat].md",
}
SESSION = "---\nagentdoc: {}\n---\n\n## User\n\nhello\n"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain.md", "plain.md"),
        ("日記 été.md", "日記 été.md"),
        (os.fsdecode(b"r\xe9sum\xe9.md"), "r\\xe9sum\\xe9.md"),
        ("two\nlines.md", "two\\nlines.md"),
        ("tab\there.md", "tab\\there.md"),
        ("-rf.md", "-rf.md"),
    ],
)
def test_a_name_is_shown_as_it_is_or_with_escapes(name: str, shown: str) -> None:
    assert shown_name(name) == shown
    shown_name(name).encode("utf-8")  # storable in any UTF-8 text


@pytest.mark.parametrize(
    ("name", "target"),
    [
        ("chat.thinking.md", "chat.thinking.md"),
        ("日記.md", "日記.md"),
        ("my chat.md", "my%20chat.md"),
        ("a (1).md", "a%20%281%29.md"),
        ("two\nlines.md", "two%0Alines.md"),
        (os.fsdecode(b"r\xe9sum\xe9.md"), "r%E9sum%E9.md"),
    ],
)
def test_a_name_as_a_link_target_is_percent_encoded_where_it_must_be(
    name: str, target: str
) -> None:
    assert link_target(name) == target


@pytest.mark.parametrize("case", NAMES)
def test_status_and_sidecar_link_of_any_name(tmp_path: Path, case: str) -> None:
    doc = tmp_path / NAMES[case]
    doc.write_text(SESSION, encoding="utf-8")
    assert write_status(
        doc, Status(document=doc.name, state="error", error=f"{doc}: x", updated="")
    )
    found = read_status(doc)
    assert found is not None and found.document == shown_name(doc.name)
    assert [s.document for s in all_statuses(tmp_path)] == [shown_name(doc.name)]
    link = sidecar_link(doc, 3)
    link.encode("utf-8")
    assert not set(link) & set(" \n()")


def _state(doc: Path) -> str | None:
    found = read_status(doc)
    return found.state if found is not None else None


def test_more_than_1024_files_opened_and_taken_back() -> None:
    # The clean-up of expired tokens once ran over a key `take_own_open` had emptied.
    for n in range(1100):
        path = Path(f"/nonexistent/{n}.md")
        ownopens.note_own_open(path)
        assert ownopens.take_own_open(path)
    ownopens.note_own_open(Path("/nonexistent/last.md"))


@pytest.mark.slow
def test_the_daemon_answers_documents_of_any_name_in_a_big_tree(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    """Over 1,024 notes (the own-open clean-up threshold) and session documents whose names
    are not UTF-8, hold a newline, start with a dash or are near the length limit: the daemon
    starts, answers each, and `agentdoc status --json` lists each."""
    root = tmp_path / "vault"
    for n in range(1100):
        folder = root / f"f{n % 11}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{n}.md").write_text(f"# Note {n}\n\ntext\n", encoding="utf-8")
    docs = [root / name for name in NAMES.values()]
    for doc in docs:
        doc.write_text(SESSION, encoding="utf-8")
    fake = fake_claude("thinking_text.ndjson")
    config = write_config(tmp_path / "config.toml", settle_step=0.1, settle_max=1.0)
    env = base_env(
        tmp_path / "home",
        **fake.env,
        AGENTDOC_CLAUDE=str(fake.executable),
        AGENTDOC_CONFIG=str(config),
    )
    with watching(root, env, tmp_path / "watch.log", ["--send-pending"], ready_timeout=60) as d:
        answered = ["user", "assistant", "user"]
        wait_for(lambda: all(roles(d) == answered for d in docs), "every document answered", 60)
        wait_for(lambda: all(_state(d) == "idle" for d in docs), "every status to say idle")
        listed = {s["document"] for s in status_json(root, env)["documents"]}
        assert "\\udc" not in d.log() and "Traceback" not in d.log()
    assert listed == {shown_name(d.name) for d in docs}
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        assert f"[thinking]({sidecar_link(doc, 1)})" in text
    one = run_cli(["status", str(docs[0])], env)
    assert one.returncode == 0 and "r\\xe9sum\\xe9-chat.md: idle" in one.stdout, one


def test_chatty_libraries_are_quiet_at_vv(tmp_path: Path) -> None:
    """-vv is agentdoc's debug output, not markdown-it's thousands of lines per parse."""
    doc = tmp_path / "chat.md"
    doc.write_text(SESSION, encoding="utf-8")
    env = base_env(tmp_path / "home")
    result = run_cli(["-vv", "status", str(doc)], env)
    assert result.returncode == 0, result.stderr
    assert "markdown_it" not in result.stderr


@pytest.mark.parametrize("case", NAMES)
def test_the_live_line_shows_any_name(case: str) -> None:
    from agentdoc.cli.terminal import describe, error_line
    from agentdoc.turn import Progress

    report = Progress(Path("/docs") / NAMES[case], 0, "failed", 0.0, 0, None, "boom")
    for line in (describe(report), error_line(report)):
        assert shown_name(NAMES[case]) in line and "\n" not in line
        line.encode("utf-8")


@pytest.mark.parametrize(
    ("name", "typed"),
    [("chat.md", "chat.md"), ("-rf.md", "./-rf.md"), ("my chat.md", "'my chat.md'")],
)
def test_a_suggested_command_can_be_typed_as_shown(name: str, typed: str) -> None:
    from agentdoc.daemon.notices import as_argument

    assert as_argument(name) == typed


def test_a_log_line_shows_a_non_utf8_name_with_escapes() -> None:
    import logging

    from agentdoc.cli.logs import Escaping

    name = NAMES["non-UTF-8"]
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "%s: held", (name,), None)
    assert Escaping("%(message)s").format(record) == "r\\xe9sum\\xe9-chat.md: held"
