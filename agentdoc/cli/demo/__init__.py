"""`agentdoc demo`: the real Claude Code CLI, a canned model, a document that fills itself in.

The offline Messages API runs on 127.0.0.1 with a scripted reply, and the CLI gets a scratch
HOME inside the demo folder, so the demo needs no account, touches none of the user's Claude
settings, and sends nothing over the network.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.cli.echo import ReplyEcho
from agentdoc.cli.terminal import LiveView
from agentdoc.config import Settings, load_settings
from agentdoc.daemon import own_command
from agentdoc.turn import Mode, Progress, TurnRunner

FIRST_REPLY: list[dict[str, Any]] = [
    {
        "type": "thinking",
        "thinking": "Three reasons, short. Durability, editability, and tooling such as git.",
        "signature": "demo-signature",
    },
    {
        "type": "text",
        "text": (
            "1. **It lasts.** A file outlives any chat window: it is yours, it opens in any "
            "editor, and it is still readable in ten years.\n"
            "2. **You can edit it.** Fix a prompt, trim a tangent, add notes between turns: "
            "the document is the conversation.\n"
            "3. **Your tools already work on it.** `git diff`, grep, backups and code review "
            "all apply, with no export step."
        ),
    },
]
SECOND_REPLY: list[dict[str, Any]] = [
    {
        "type": "text",
        "text": (
            "The second: because the file *is* the conversation, you can steer it by editing, "
            "and the next turn starts from what you wrote, not from what a chat log remembers."
        ),
    }
]
FIRST_PROMPT = (
    "Why keep a conversation with an AI in a plain markdown file? Give me three short reasons."
)
SECOND_PROMPT = "Which of those three matters most, in one sentence?"


def demo_environment(api: FakeMessagesAPI, home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "sk-offline-demo",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
    }


def run_demo(folder: Path, *, delay: float, out: TextIO) -> Path:
    folder = folder.absolute()  # HOME below must not depend on the CLI's working folder
    folder.mkdir(parents=True, exist_ok=True)
    doc = folder / "hello.md"
    source = resources.files("agentdoc.cli.demo").joinpath("hello.md")
    doc.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    home = folder / ".claude-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()
    settings = load_settings()
    with FakeMessagesAPI([FIRST_REPLY, SECOND_REPLY], delta_delay=delay) as api:
        env = demo_environment(api, home)
        out.write(f"offline Messages API on {api.base_url}; streaming into {doc}\n")
        _turn(out, "start", FIRST_PROMPT, lambda report: _run(doc, settings, "start", env, report))
        with doc.open("a", encoding="utf-8") as f:
            f.write(SECOND_PROMPT + "\n")
        _turn(
            out, "resume", SECOND_PROMPT, lambda report: _run(doc, settings, "resume", env, report)
        )
    sidecar = doc.with_name("hello.thinking.md")
    out.write(f"\n----- the model's thinking, kept apart in {sidecar.name} -----\n")
    out.write(sidecar.read_text(encoding="utf-8"))
    out.write(next_steps(doc))
    out.flush()
    return doc


def _run(
    doc: Path,
    settings: Settings,
    mode: Mode,
    env: dict[str, str],
    report: Callable[[Progress], None],
) -> None:
    clear = own_command(doc, settings)
    TurnRunner(doc, settings, clear=clear, mode=mode, environ=env, on_progress=report).run()


def _turn(
    out: TextIO, mode: Mode, prompt: str, run: Callable[[Callable[[Progress], None]], None]
) -> None:
    """Show the prompt, then the reply as it streams (in the terminal, or echoed to `out`)."""
    out.write(f"\n## User ({mode})\n\n{prompt}\n\n## Assistant\n\n")
    out.flush()
    view = LiveView(show_reply=True)
    if view.show_reply:  # a terminal: the reply streams under the progress line
        run(view)
        return
    echo = ReplyEcho(out)

    def report(p: Progress) -> None:
        view(p)
        echo(p)

    run(report)


def next_steps(doc: Path) -> str:
    """What to do after the demo: the same steps with the real model."""
    shown = os.path.relpath(doc) if doc.is_relative_to(Path.cwd()) else str(doc)
    return (
        f"\nThe whole conversation is in {shown}; open it in your editor.\n"
        "\nNext, with the real model:\n"
        "  1. log in to Claude Code once: `claude` (from a clone: node_modules/.bin/claude)\n"
        '  2. agentdoc new notes/first.md --title "First"\n'
        "  3. write your question under its last `## User` heading, save, and run\n"
        "     agentdoc run notes/first.md      (or keep `agentdoc watch notes` running and save)\n"
        "  `agentdoc doctor` checks the set-up; `agentdoc --help` lists every command.\n"
    )
