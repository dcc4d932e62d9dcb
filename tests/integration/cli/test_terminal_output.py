"""What a one-shot run prints: the reply on stdout, progress and errors on stderr.

The pipe tests run the installed `agentdoc` script as a user would (`agentdoc run x.md | cat`);
the terminal tests give it a real pseudo-terminal and read the screen through a terminal
emulator (pyte), so a display that repeats itself when it wraps shows up as repeated lines.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdoc.agents import Reply, TextPart, ToolPart
from agentdoc.cli.echo import settled_text
from agentdoc.document.render import render_body
from tests.support.fake_claude import FakeClaude

AGENTDOC = Path(sys.executable).with_name("agentdoc")


def reply_in(path: Path) -> str:
    """The reply body as written into the document: after `## Assistant`, before the footer."""
    text = path.read_text()
    body = text.split("## Assistant\n\n", 1)[1]
    return body.split("\n\n<sub>", 1)[0].split("\n\n> [!WARNING]", 1)[0]


def make_document(tmp_path: Path, name: str = "chat.md") -> Path:
    path = tmp_path / name
    path.write_text("---\nagentdoc: {}\n---\n\n## User\n\nhi there\n")
    return path


def environment(fake: FakeClaude, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(fake.env)
    env.update(
        AGENTDOC_CLAUDE=str(fake.executable),
        AGENTDOC_CONFIG=str(tmp_path / "config.toml"),
        TERM="xterm-256color",
    )
    env.update(extra)
    return env


# -- stdout is a pipe --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "transcript", ["plain_text.ndjson", "unicode_markdown.ndjson", "tool_use_read.ndjson"]
)
def test_piped_stdout_carries_exactly_the_reply(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude], transcript: str
) -> None:
    fake = fake_claude(transcript, delay="0.005")
    path = make_document(tmp_path)
    done = subprocess.run(
        [str(AGENTDOC), "run", str(path)],
        env=environment(fake, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == reply_in(path) + "\n"
    assert "agentdoc:" not in done.stdout  # no region markers
    assert "turn 1: done" in done.stderr


def test_quiet_prints_nothing_on_success(tmp_path: Path, plain_claude: FakeClaude) -> None:
    path = make_document(tmp_path)
    done = subprocess.run(
        [str(AGENTDOC), "run", "--quiet", str(path)],
        env=environment(plain_claude, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "plain reply from the mock" in path.read_text()


def test_a_failure_is_printed_once_in_full_with_the_error_prefix(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    long_reason = "the CLI gave up: " + " ".join(f"reason{i}" for i in range(60))
    fake = fake_claude(None, exit="1", stderr=long_reason)
    path = make_document(tmp_path)
    for quiet in ([], ["--quiet"]):
        done = subprocess.run(
            [str(AGENTDOC), "run", *quiet, str(path)],
            env=environment(fake, tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        assert done.stdout == ""
        errors = [line for line in done.stderr.splitlines() if long_reason[:20] in line]
        assert len(errors) == 1 and errors[0].startswith("Error: chat.md turn ")
        assert "reason59" in errors[0]
        # No reply text: the prompt stays pending, so the quiet run sends the same one again.


# -- settled text: never more than the final reply starts with ----------------------------------

_PIECES = st.sampled_from(
    ["User", "Assistant", "##", "#", " ", "\n", "---", "===", "```", "x", "<div>", "- ", "> "]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30), st.booleans())
def test_settled_text_is_always_a_start_of_the_final_reply(pieces: list[str], tool: bool) -> None:
    text = "".join(pieces)
    before: tuple[TextPart | ToolPart, ...] = (
        (ToolPart("t1", "Read", {"file_path": "a.py"}, result="one\ntwo\n"),) if tool else ()
    )
    final = render_body(Reply(parts=(*before, TextPart(text, True))), final=True)
    for end in range(len(text) + 1):
        streaming = Reply(parts=(*before, TextPart(text[:end], False)))
        assert final.startswith(settled_text(streaming))


def test_a_running_tool_block_is_not_settled() -> None:
    running = Reply(parts=(TextPart("Let me look.\n\n", True), ToolPart("t1", "Read", {})))
    assert settled_text(running) == "Let me look.\n\n"  # the text, and no tool block yet


# -- a real terminal --------------------------------------------------------------------------


def run_in_terminal(
    argv: list[str], env: dict[str, str], *, columns: int = 40, rows: int = 24
) -> tuple[bytes, pyte.Screen]:
    """Run `argv` with a pseudo-terminal of the given size as stdin, stdout and stderr."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    output = bytearray()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has gone
                break
            if not chunk:
                break
            output += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    assert proc.wait(timeout=30) == 0, output.decode(errors="replace")
    screen = pyte.Screen(columns, rows)
    pyte.ByteStream(screen).feed(bytes(output))
    return bytes(output), screen


def test_the_live_line_does_not_repeat_itself_when_it_wraps(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    fake = fake_claude("long_stream.ndjson", delay="0.002")
    name = "a-document-with-a-name-far-too-long-for-the-terminal.md"
    path = make_document(tmp_path, name)
    raw, screen = run_in_terminal([str(AGENTDOC), "run", str(path)], environment(fake, tmp_path))
    shown = "\n".join(line.rstrip() for line in screen.display)
    # The live lines were taken down; the finished turn left one line (wrapped, in full).
    assert "streaming" not in shown and "starting" not in shown
    assert shown.count("turn 1: done") == 1 or shown.replace("\n", "").count("turn 1: done") == 1
    assert shown.count("a-document-with") == 1
    assert b"\x1b[32m" in raw  # "done" in green
    # While it streamed, the name was shortened so that the state still showed: its start
    # went, the end of a path (the file name) is what tells documents apart.
    assert "\x1b[1m…terminal.md\x1b[0m turn 1: \x1b[36mstreaming" in raw.decode()
    assert "the reply" not in shown  # the reply itself is not printed without --print


def test_print_streams_the_reply_into_the_terminal(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    fake = fake_claude("plain_text.ndjson", delay="0.01")
    path = make_document(tmp_path)
    _raw, screen = run_in_terminal(
        [str(AGENTDOC), "run", "--print", str(path)], environment(fake, tmp_path), columns=80
    )
    shown = [line.rstrip() for line in screen.display if line.strip()]
    assert shown.count("Hello! This is a plain reply from the mock.") == 1
    assert shown[-1].startswith("chat.md turn 1: done")


@pytest.mark.parametrize("variable", [{"NO_COLOR": "1"}, {"TERM": "dumb"}])
def test_no_color_and_dumb_terminals_get_no_colour(
    tmp_path: Path, variable: dict[str, str], plain_claude: FakeClaude
) -> None:
    path = make_document(tmp_path)
    raw, screen = run_in_terminal(
        [str(AGENTDOC), "run", str(path)],
        environment(plain_claude, tmp_path, **variable),
        columns=80,
    )
    assert b"\x1b[3" not in raw  # no foreground colours
    if variable.get("TERM") == "dumb":
        # Not redrawn in place: plain timestamped lines, as in a log.
        assert b"\x1b[" not in raw
        assert any(" chat.md turn 1: done" in line for line in screen.display)
