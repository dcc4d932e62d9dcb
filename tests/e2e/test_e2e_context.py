"""Includes and pictures through the real Claude CLI, checked in the requests the API receives."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.daemon.pool import WarmPool
from agentdoc.document import parser as document
from agentdoc.turn.includes import IncludeRefused
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env, one_turn, require_claude
from tests.support.clearance import own_leave
from tests.support.documents import PNG
from tests.support.git import git

pytestmark = pytest.mark.e2e

DOC = """---
agentdoc: {}
---

## User

"""
OK = [{"type": "text", "text": "Noted."}]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The document's folder, with nested files, a picture, and a secret beside it.

    The folder is its own git work tree: the work tree enclosing a document may be read, and
    pytest's temp folder may itself lie inside one (``--basetemp`` in the checkout), which would
    put the secret within reach whatever the path rule.
    """
    folder = tmp_path / "work"
    (folder / "src" / "deep").mkdir(parents=True)
    git(folder, "init", "--quiet")
    (folder / "notes").mkdir()
    (folder / "notes" / "spec.txt").write_text("SPEC-CONTENT\n")
    (folder / "src" / "a.py").write_text("ALPHA = 1\n")
    (folder / "src" / "b.py").write_text("BETA = 2\n")
    (folder / "src" / "deep" / "c.py").write_text("GAMMA = 3\n")
    (folder / "pic.png").write_bytes(PNG)
    (tmp_path / "secret.txt").write_text("SECRET-CONTENT\n")
    (folder / "out.txt").symlink_to(tmp_path / "secret.txt")
    (folder / "big.log").write_bytes(b"y" * 10 * 1024 * 1024)
    return folder


def ask(doc: Path, prompt: str) -> None:
    doc.write_text(DOC + prompt + "\n")


def sent(api: FakeMessagesAPI) -> str:
    """Everything the CLI put in its last request's messages, as JSON text."""
    return json.dumps(api.wait_for_requests(1)[-1].messages(), ensure_ascii=False)


@pytest.mark.parametrize(
    ("line", "present"),
    [
        ("@notes/spec.txt", ["SPEC-CONTENT"]),
        ("@src/*.py", ["ALPHA = 1", "BETA = 2"]),
        ("@src/**/*.py", ["ALPHA = 1", "BETA = 2", "GAMMA = 3"]),
        ("@src/deep/c.py", ["GAMMA = 3"]),
    ],
)
def test_included_files_reach_the_api_under_their_paths(
    tmp_path: Path, work: Path, settings: Settings, line: str, present: list[str]
) -> None:
    doc = work / "chat.md"
    ask(doc, f"Summarise these.\n{line}")
    outcome, api = one_turn(doc, settings, tmp_path / "home")
    body = sent(api)
    assert outcome.state == "done"
    for text in present:
        assert text in body
    assert "Contents of `" in body
    assert "SECRET-CONTENT" not in body
    assert line in doc.read_text()  # the document keeps the line, not the file


@pytest.mark.parametrize(
    "line",
    ["@../secret.txt", "@{secret}", "@out.txt", "@missing.txt", "@big.log"],
)
def test_refused_includes_send_nothing_and_keep_the_prompt(
    tmp_path: Path, work: Path, settings: Settings, line: str
) -> None:
    line = line.replace("{secret}", str(tmp_path / "secret.txt"))
    doc = work / "chat.md"
    ask(doc, f"Read this.\n{line}")
    with FakeMessagesAPI([OK]) as api:
        with pytest.raises(IncludeRefused) as refused:
            TurnRunner(
                doc, settings, clear=own_leave, environ=claude_env(api, tmp_path / "home")
            ).run()
        assert api.requests == []
    name = line.removeprefix("@")
    assert name in str(refused.value)
    parsed = document.parse(doc.read_text())
    assert parsed.pending_prompt() == f"Read this.\n{line}"
    assert "**Not sent:**" in doc.read_text()
    assert name in doc.read_text()


def test_the_clis_own_expansion_of_mentions_sends_nothing(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    doc = work / "chat.md"
    secret = tmp_path / "secret.txt"
    ask(doc, f"What do @../secret.txt and @{secret} and @notes/spec.txt say?")
    outcome, api = one_turn(doc, settings, tmp_path / "home")
    body = sent(api)
    assert outcome.state == "done"
    assert "SECRET-CONTENT" not in body
    assert "SPEC-CONTENT" not in body  # a mention inside a sentence is text, not an include
    assert "secret.txt" in body  # the words still reach the model


def test_a_prompt_starting_with_a_slash_runs_no_command_of_the_clis(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    """A project's own command (`.claude/commands/*.md`) would replace the prompt with its
    template; the prompt goes to the model as written instead."""
    commands = work / ".claude" / "commands"
    commands.mkdir(parents=True)
    # Its description is listed to the model as an available command; its body is not.
    (commands / "evil.md").write_text(
        "---\ndescription: a project command\n---\nEVIL-TEMPLATE $ARGUMENTS\n"
    )
    doc = work / "chat.md"
    ask(doc, "/evil hello")
    outcome, api = one_turn(doc, settings, tmp_path / "home")
    body = sent(api)
    assert outcome.state == "done"
    assert "EVIL-TEMPLATE" not in body
    assert "\u2060/evil hello" in body  # as written, but for the invisible word joiner


def _images(api: FakeMessagesAPI) -> list[dict[str, object]]:
    request = api.wait_for_requests(1)[-1]
    return [
        block
        for message in request.messages()
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "image"
    ]


def test_a_picture_reaches_the_api_byte_exact(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    doc = work / "chat.md"
    ask(doc, "What is in ![diagram](pic.png)?")
    outcome, api = one_turn(doc, settings, tmp_path / "home")
    images = _images(api)
    assert outcome.state == "done"
    assert len(images) == 1
    source = images[0]["source"]
    assert isinstance(source, dict)
    assert source["media_type"] == "image/png"
    assert base64.b64decode(source["data"]) == PNG


def test_a_picture_reaches_the_api_from_a_warm_cli(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    doc = work / "chat.md"
    ask(doc, "Look: ![p](pic.png)")
    pool = WarmPool()
    try:
        with FakeMessagesAPI([OK]) as api:
            env = claude_env(api, tmp_path / "home")
            outcome = TurnRunner(
                doc, settings, clear=own_leave, environ=env, launcher=pool.launcher(doc)
            ).run()
            images = _images(api)
    finally:
        pool.close_all()
    assert outcome.state == "done"
    source = images[0]["source"]
    assert isinstance(source, dict)
    assert base64.b64decode(source["data"]) == PNG


def test_obsidian_links_reach_the_api_as_the_note_and_the_picture(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    (work / ".obsidian").mkdir()
    (work / "chats").mkdir()
    (work / "notes" / "Roadmap.md").write_text("ROADMAP-CONTENT\n")
    (work / "attachments").mkdir()
    (work / "attachments" / "Pasted image 20260101.png").write_bytes(PNG)
    doc = work / "chats" / "chat.md"
    ask(doc, "What does [[Roadmap|the roadmap]] plan?\n\n![[Pasted image 20260101.png]]")
    outcome, api = one_turn(doc, settings, tmp_path / "home")
    body = sent(api)
    images = _images(api)
    assert outcome.state == "done"
    assert "Contents of `notes/Roadmap.md`" in body and "ROADMAP-CONTENT" in body
    assert "SECRET-CONTENT" not in body
    [image] = images
    source = image["source"]
    assert isinstance(source, dict)
    assert base64.b64decode(source["data"]) == PNG
    assert "[[Roadmap|the roadmap]]" in doc.read_text()  # the document keeps the link


def test_an_archived_conversation_resumes_and_rebuilds_with_its_history(
    tmp_path: Path, work: Path, settings: Settings
) -> None:
    from agentdoc.conversation import archive_document
    from agentdoc.document import archive_path

    doc = work / "long.md"
    answers = [[{"type": "text", "text": f"Answer {n}."}] for n in range(1, 6)]
    with FakeMessagesAPI(answers) as api:
        env = claude_env(api, tmp_path / "home")
        for n in range(1, 4):
            text = doc.read_text() if doc.exists() else DOC
            doc.write_text(text + f"Question {n}?\n")
            assert TurnRunner(doc, settings, clear=own_leave, environ=env).run().state == "done"
        archive_document(doc, keep=1)
        assert "Question 1?" in archive_path(doc).read_text()
        assert "Question 1?" not in doc.read_text()

        doc.write_text(doc.read_text() + "Question 4?\n")
        resumed = TurnRunner(doc, settings, clear=own_leave, environ=env).run()
        assert resumed.state == "done" and resumed.turn == 4
        sent_resumed = api.wait_for_requests(4)[-1].user_texts()[-1]

        doc.write_text(doc.read_text() + "Question 5?\n")
        rebuilt = TurnRunner(doc, settings, clear=own_leave, mode="start", environ=env).run()
        assert rebuilt.state == "done" and rebuilt.turn == 5
        sent_rebuilt = api.wait_for_requests(5)[-1].user_texts()[-1]

    # The resumed session knew everything: the new prompt alone, no edit diff, no transcript.
    assert sent_resumed == "Question 4?"
    # The rebuilt session's first prompt carries the archived exchanges, then the rest.
    for text in ("Question 1?", "Answer 1.", "Question 3?", "Answer 4.", "Question 5?"):
        assert text in sent_rebuilt
    assert sent_rebuilt.index("Answer 1.") < sent_rebuilt.index("Answer 4.")
    final = document.parse(doc.read_text())
    assert (final.meta.archived, final.turn_count()) == (2, 5)
    assert "Answer 5." in final.turns[-2].content


def test_the_context_used_reaches_the_footer_and_the_status_file(
    tmp_path: Path, work: Path
) -> None:
    from agentdoc.records.status import read_status

    doc = work / "chat.md"
    ask(doc, "Hello?")
    settings = Settings(claude=str(require_claude()), flush_interval=0.05, context_hint=0.000001)
    outcome, _api = one_turn(doc, settings, tmp_path / "home")
    assert outcome.state == "done"
    status = read_status(doc)
    assert status is not None and status.context_used and status.context_size
    assert status.context_used < status.context_size
    footer = doc.read_text().split("Noted.")[1]
    assert " context (0%): nearly full" in footer  # past the (tiny) threshold: the hint
    assert "agentdoc archive chat.md" in footer
