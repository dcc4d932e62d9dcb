"""A small stand-in for a long-lived CLI that speaks the stdin protocol of a warm session."""

from __future__ import annotations

from pathlib import Path

from agentdoc.config import Settings
from tests.support.processes import QUICK_SETTINGS

# A conversation a stand-in that echoes its prompts has had, in its session SESSION.
SESSION = "0b7f8c52-5d1e-4c3a-9f6e-2a4b8d0c1e37"
CONVERSATION = f"""---
agentdoc: {{session: {SESSION}}}
---

# Chat

## User

hello

## Assistant

echo hello

## User

"""

STAND_IN = r"""
import json, os, sys
def out(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n"); sys.stdout.flush()
turn = 0
hook = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "user":
        turn += 1
        text = msg["message"]["content"]
        if text == "die-once" and not os.path.exists("died"):
            open("died", "w").close()
            sys.exit(1)  # gone without a word, as a CLI killed between turns
        out({"type": "system", "subtype": "init", "session_id": "s-1"})
        if text == "hang":
            continue  # a turn that never ends by itself
        if text == "half":  # a reply begun and never ended
            out({"type": "assistant", "message": {"id": f"m{turn}", "content": [
                {"type": "text", "text": "half"}]}})
            continue
        if text == "tool":  # a tool in the first response: the CLI calls the hook first
            out({"type": "control_request", "request_id": "h1", "request": {
                "subtype": "hook_callback", "callback_id": hook, "input": {}}})
            answer = json.loads(sys.stdin.readline())
            assert answer["response"]["request_id"] == "h1", answer
            open("tool-ran", "w").close()
        out({"type": "assistant", "message": {"id": f"m{turn}", "content": [
            {"type": "text", "text": f"echo {text}"}]}})
        out({"type": "result", "subtype": "success", "is_error": False, "session_id": "s-1"})
        if os.environ.get("LIFECYCLE"):  # as Claude Code 2.1.3xx: a line after the result
            out({"type": "command_lifecycle", "state": "completed", "session_id": "s-1"})
    elif msg["type"] == "control_request" and msg["request"]["subtype"] == "initialize":
        hook = msg["request"]["hooks"]["PreToolUse"][0]["hookCallbackIds"][0]
    elif msg["type"] == "control_request" and not os.environ.get("IGNORE_INTERRUPT"):
        out({"type": "control_response", "response": {
            "subtype": "success", "request_id": msg["request_id"]}})
        out({"type": "result", "subtype": "error_during_execution", "session_id": "s-1"})
"""


def stand_in_settings(claude: Path, **overrides: object) -> Settings:
    """A daemon's settings with the stand-in at `claude`: two warm sessions, quick settles."""
    base: dict[str, object] = {"claude": str(claude), "warm_sessions": 2, **QUICK_SETTINGS}
    return Settings.model_validate({**base, **overrides})
