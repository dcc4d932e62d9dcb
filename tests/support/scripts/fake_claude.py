"""A stand-in `claude` executable that replays a recorded stream-json transcript.

Configured by environment variables so tests can shape each run:
FAKE_CLAUDE_TRANSCRIPT  path of the .ndjson to print (line by line)
FAKE_CLAUDE_LOG         file to which argv, cwd and stdin are appended as one JSON line
FAKE_CLAUDE_DELAY       seconds between lines (default 0)
FAKE_CLAUDE_HANG_AFTER  after this many lines, stop printing and wait for a signal
FAKE_CLAUDE_GATE        file path: before printing line FAKE_CLAUDE_GATE_AT, wait until it exists
FAKE_CLAUDE_EXIT        exit code at the end (default 0)
FAKE_CLAUDE_STDERR      text written to stderr before exiting
FAKE_CLAUDE_OWN_SESSION set: a run given `--session-id=ID` or `--resume=ID` reports ID as its
                        session, as the real CLI does, not the recording's (two documents, two
                        sessions)

With `--input-format=stream-json` (a long-lived CLI, as `agentdoc run` in a terminal starts) it
reads one `user` line as the prompt, replays the transcript, and, once that had a `result`,
waits for the end of its input before exiting, as the real CLI does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

WARM = "--input-format=stream-json"


def read_prompt(warm: bool) -> str:
    if not warm:
        return sys.stdin.read()
    line = sys.stdin.readline()
    while '"control_request"' in line:  # the warm process's initialize, not a prompt
        line = sys.stdin.readline()
    try:
        return str(json.loads(line)["message"]["content"])
    except (ValueError, KeyError, TypeError):
        return line


def own_session(lines: list[bytes], argv: list[str]) -> list[bytes]:
    """The recording with its session id replaced by the one `--session-id=` (or `--resume=`)
    names."""
    asked = ("--session-id=", "--resume=")
    wanted = next((a.split("=", 1)[1] for a in argv if a.startswith(asked)), None)
    recorded = next(
        (json.loads(line).get("session_id") for line in lines if b"session_id" in line), None
    )
    if not wanted or not recorded:
        return lines
    return [line.replace(recorded.encode(), wanted.encode()) for line in lines]


def main() -> int:
    warm = WARM in sys.argv[1:]
    stdin = read_prompt(warm)
    log = os.environ.get("FAKE_CLAUDE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": stdin}) + "\n")
    delay = float(os.environ.get("FAKE_CLAUDE_DELAY", "0"))
    hang_after = int(os.environ.get("FAKE_CLAUDE_HANG_AFTER", "-1"))
    gate = os.environ.get("FAKE_CLAUDE_GATE")
    gate_at = int(os.environ.get("FAKE_CLAUDE_GATE_AT", "-1"))
    transcript = os.environ.get("FAKE_CLAUDE_TRANSCRIPT")
    lines = Path(transcript).read_bytes().splitlines(keepends=True) if transcript else []
    if os.environ.get("FAKE_CLAUDE_OWN_SESSION"):
        lines = own_session(lines, sys.argv[1:])
    for n, line in enumerate(lines):
        if n == hang_after:
            while True:
                time.sleep(3600)
        if gate and n == gate_at:
            while not os.path.exists(gate):
                time.sleep(0.01)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        if delay:
            time.sleep(delay)
    sys.stderr.write(os.environ.get("FAKE_CLAUDE_STDERR", ""))
    code = int(os.environ.get("FAKE_CLAUDE_EXIT", "0"))
    if warm and code == 0 and any(b'"type":"result"' in line for line in lines):
        sys.stdin.read()  # the next turns never come: the end of input ends the process
    return code


if __name__ == "__main__":
    sys.exit(main())
