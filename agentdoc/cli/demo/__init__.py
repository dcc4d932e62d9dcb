"""`agentdoc demo`: the real Claude Code CLI, a canned model, a document that fills itself in.

The offline Messages API runs on 127.0.0.1 with a scripted reply, and the CLI gets a scratch
HOME inside the demo folder, so the demo needs no account, touches none of the user's Claude
settings, and sends nothing over the network.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.cli.terminal import LiveView
from agentdoc.config import load_settings
from agentdoc.turn import TurnRunner

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
        TurnRunner(doc, settings, mode="start", environ=env, on_progress=LiveView()).run()
        with doc.open("a", encoding="utf-8") as f:
            f.write(SECOND_PROMPT + "\n")
        TurnRunner(doc, settings, mode="resume", environ=env, on_progress=LiveView()).run()
    out.write(f"\n----- {doc} -----\n")
    out.write(doc.read_text(encoding="utf-8"))
    sidecar = doc.with_name("hello.thinking.md")
    out.write(f"----- {sidecar} -----\n")
    out.write(sidecar.read_text(encoding="utf-8"))
    return doc
