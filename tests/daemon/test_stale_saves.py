"""A save made from a copy older than agentdoc's reply keeps the reply and the person's text."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentdoc.document import parser as document
from tests.support.daemon import (
    DOC,
    Running,
    first_answered,
    make_daemon,
    roles,
    save_and_wait_reply,
    save_and_wait_streaming,
)
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

needs_vim = pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")


def test_a_stale_copy_saved_after_the_reply_is_merged_and_its_new_prompt_sent(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with Running(make_daemon(folder, plain_claude)):
        asked = DOC + "first\n"
        save_and_wait_reply(doc, asked)
        answered = doc.read_text()
        session = document.parse(answered).meta.session
        assert session
        # The editor never reloaded: its copy is the prompt as sent, plus what was typed since.
        doc.write_text(asked.replace("# Chat\n", "# Chat\n\nA note.\n") + "\n## User\n\nsecond\n")
        wait_for(lambda: len(roles(doc)) == 5, what="the second prompt answered")
    text = doc.read_text()
    assert "A note." in text
    parsed = document.parse(text)
    assert parsed.meta.session == session
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user", "assistant", "user"]
    assert parsed.turns[0].content.strip() == "first"
    assert parsed.turns[2].content.strip() == "second"
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "second"]


def test_a_stale_copy_saved_unchanged_gets_the_reply_back_and_sends_nothing(
    folder: Path, plain_claude: FakeClaude
) -> None:
    doc, other = folder / "chat.md", folder / "other.md"
    doc.write_text(DOC)
    other.write_text(DOC)
    with Running(make_daemon(folder, plain_claude)):
        asked = DOC + "first\n"
        save_and_wait_reply(doc, asked)
        answered = doc.read_text()
        doc.write_text(asked)  # Vim's `:w!` of the buffer it had before the reply
        wait_for(lambda: doc.read_text() == answered, what="the reply put back")
        other.write_text(DOC + "elsewhere\n")
        wait_for(lambda: len(roles(other)) == 3, what="the other document's reply")
    assert [call["stdin"] for call in plain_claude.calls()] == ["first", "elsewhere"]


def test_a_reloaded_copy_with_the_reply_removed_by_hand_stays_as_saved(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with first_answered(doc, plain_claude) as answered:
        # The person removed the reply's text but kept the session key (a reloaded copy).
        reply = document.parse(answered).turns[1].content.strip()
        trimmed = answered.replace(reply, "(cut)")
        doc.write_text(trimmed)
        other = folder / "other.md"
        other.write_text(DOC + "elsewhere\n")
        wait_for(lambda: len(roles(other)) == 3, what="the other document's reply")
    assert doc.read_text() == trimmed


@needs_vim
def test_plain_vim_writing_its_stale_buffer_keeps_the_reply_and_sends_the_new_prompt(
    tmp_path: Path, folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    """Vim without any recipe: the prompt is saved, the reply lands on disk while the buffer
    stays as it was, a new prompt is typed and written over the file (answering `y` to Vim's
    "The file has been changed since reading it!!! Do you really want to write to it")."""
    on_disk = "join(readfile(expand('%:p')), '\\n')"
    answered = f"{on_disk} =~# 'plain reply from the mock' && {on_disk} !~# 'agentdoc:reply'"
    with Running(make_daemon(folder, plain_claude)):
        script = tmp_path / "steps.vim"
        script.write_text(
            "\n".join(
                [
                    "normal Gofirst question",
                    "write",
                    # Vim's own wait (the editor idles while the reply lands), not the test's.
                    f"let n = 0 | while !({answered}) && n < 600 | sleep 50m | let n += 1 |"
                    " endwhile",
                    f"if !({answered}) | cquit | endif",
                    "call append('$', ['', '## User', '', 'second question'])",
                    "write",  # Vim asks whether to write over the changed file: `y`
                    "qa!",
                ]
            )
            + "\n"
        )
        done = subprocess.run(
            ["vim", "-Nu", "NONE", "-i", "NONE", "-n", "-Es", "-S", str(script), str(doc)],
            env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)},
            input=b"y\n",
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, "the reply never reached the file"
        wait_for(lambda: len(roles(doc)) == 5, what="the second prompt answered")
    parsed = document.parse(doc.read_text())
    assert parsed.meta.session
    contents = [t.content.strip() for t in parsed.turns]
    assert contents[0] == "first question" and contents[2] == "second question"
    assert "plain reply from the mock" in contents[1] and "plain reply" in contents[3]
    assert [call["stdin"] for call in plain_claude.calls()] == ["first question", "second question"]


def test_a_paragraph_typed_below_a_streaming_reply_goes_with_the_next_prompt(
    tmp_path: Path, folder: Path, doc: Path, gated_claude: FakeClaude
) -> None:
    gate = tmp_path / "gate"
    try:
        with Running(make_daemon(folder, gated_claude)):
            save_and_wait_streaming(doc, DOC + "first\n")
            # Below the streaming reply: a paragraph, then the person's own next prompt.
            doc.write_text(doc.read_text() + "\nA thought.\n\n## User\n\nsecond\n")
            wait_for(lambda: "A thought." in doc.read_text(), what="the save taken in")
            gate.touch()
            wait_for(lambda: len(gated_claude.calls()) == 2, what="the next prompt sent")
            wait_for(lambda: len(roles(doc)) >= 6, what="its reply")
    finally:
        gate.touch()
    sent = gated_claude.calls()[1]["stdin"]
    assert "A thought." in sent and sent.endswith("second")
