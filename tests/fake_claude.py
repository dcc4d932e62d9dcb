"""A stand-in `claude` executable that replays a recorded stream-json transcript.

Configured by environment variables so tests can shape each run:
FAKE_CLAUDE_TRANSCRIPT  path of the .ndjson to print (line by line)
FAKE_CLAUDE_LOG         file to which argv, cwd and stdin are appended as one JSON line
FAKE_CLAUDE_DELAY       seconds between lines (default 0)
FAKE_CLAUDE_HANG_AFTER  after this many lines, stop printing and wait for a signal
FAKE_CLAUDE_GATE        file path: before printing line FAKE_CLAUDE_GATE_AT, wait until it exists
FAKE_CLAUDE_EXIT        exit code at the end (default 0)
FAKE_CLAUDE_STDERR      text written to stderr before exiting
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    stdin = sys.stdin.read()
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
    return int(os.environ.get("FAKE_CLAUDE_EXIT", "0"))


if __name__ == "__main__":
    sys.exit(main())
