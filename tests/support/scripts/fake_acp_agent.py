"""A scripted ACP agent for fast tests: ``python fake_acp_agent.py SCRIPT.json [LOG.jsonl]``.

The script maps a method to what to answer, either one answer or a list (one per call, the last
repeated). An answer is an object with optional keys:

- ``steps``: done before answering, in order — ``{"update": {...}}`` (a ``session/update`` for
  the request's session), ``{"delay": s}``, ``{"stderr": text}``, ``{"stdout": raw line}``,
  ``{"crash": code}`` (exit at once; with ``"once": path``, only if that file is not there yet,
  which it makes), ``{"hang": true}`` (never answer; exits at end of input),
  ``{"until_cancel": true}`` (wait for ``session/cancel``), ``{"permission": {toolCall, options}}``
  (ask, wait for the answer), ``{"request": {method, params}}`` (ask the client, wait);
- ``result`` or ``error`` (the JSON-RPC answer), or ``raw`` (a line sent instead of one), or
  ``silent`` (no answer at all).

Methods the script does not name get a plain answer (``initialize``: version 1, no extra
capabilities; ``session/new``: a fresh session id; ``session/prompt``: ``end_turn``), any other
method ``Method not found``. Every message received is appended to LOG as one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, dict[str, Any]] = {
    "initialize": {
        "result": {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": False},
            "authMethods": [],
            "agentInfo": {"name": "fake-acp", "version": "0.1"},
        }
    },
    "session/prompt": {"result": {"stopReason": "end_turn"}},
    "session/resume": {"result": {}},
    "session/load": {"result": {}},
    "session/set_config_option": {"result": {}},
    "session/set_mode": {"result": {}},
}


class Agent:
    def __init__(self, script: dict[str, Any], log: Path | None) -> None:
        self.script = script
        self.log = log
        self.calls: dict[str, int] = {}
        self.backlog: deque[dict[str, Any]] = deque()
        self.cancelled = False
        self.sessions = 0
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        sys.stdout.flush()

    def read(self) -> dict[str, Any] | None:
        if self.backlog:
            return self.backlog.popleft()
        line = sys.stdin.readline()
        if not line:
            return None
        message: dict[str, Any] = json.loads(line)
        if self.log is not None:
            with self.log.open("a") as f:
                f.write(json.dumps(message) + "\n")
        if message.get("method") == "session/cancel":
            self.cancelled = True
        return message

    def wait_for(self, wanted: Any) -> dict[str, Any]:
        """Read until `wanted(message)`; keep other requests for later."""
        kept: list[dict[str, Any]] = []
        while True:
            message = self.read()
            if message is None:
                sys.exit(0)
            if wanted(message):
                self.backlog.extend(kept)
                return message
            if "id" in message and "method" in message:
                kept.append(message)

    def answer_spec(self, method: str) -> dict[str, Any]:
        count = self.calls.get(method, 0)
        self.calls[method] = count + 1
        spec = self.script.get(method)
        if isinstance(spec, list):
            spec = spec[min(count, len(spec) - 1)] if spec else {}
        if isinstance(spec, dict):
            return spec
        if method == "session/new":
            self.sessions += 1
            return {"result": {"sessionId": f"sess-{self.sessions}", "modes": MODES}}
        if method in DEFAULTS:
            return DEFAULTS[method]
        return {"error": {"code": -32601, "message": f"Method not found: {method}"}}

    def handle(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return  # a notification (cancel) or an answer nobody waits for
        if method == "session/prompt":
            self.cancelled = False
        spec = self.answer_spec(method)
        session = (message.get("params") or {}).get("sessionId", "")
        for step in spec.get("steps", ()):
            self.step(step, session)
        if "raw" in spec:
            sys.stdout.write(spec["raw"] + "\n")
            sys.stdout.flush()
        elif not spec.get("silent"):
            key = "error" if "error" in spec else "result"
            plain = DEFAULTS.get(method, {}).get(key, {})
            self.send({"id": message["id"], key: spec.get(key, plain)})
        for step in spec.get("after", ()):  # sent after the answer (Gemini's load replay)
            self.step(step, session)

    def step(self, step: dict[str, Any], session: str) -> None:
        if "update" in step:
            self.send(
                {
                    "method": "session/update",
                    "params": {"sessionId": session, "update": step["update"]},
                }
            )
        elif "delay" in step:
            time.sleep(step["delay"])
        elif "stderr" in step:
            sys.stderr.write(step["stderr"] + "\n")
            sys.stderr.flush()
        elif "stdout" in step:
            sys.stdout.write(step["stdout"] + "\n")
            sys.stdout.flush()
        elif "crash" in step:
            once = step.get("once")  # a file: only the first process to get here exits
            if once is None or not Path(once).exists():
                if once is not None:
                    Path(once).touch()
                sys.exit(step["crash"])
        elif "hang" in step:
            self.wait_for(lambda m: False)
        elif "until_cancel" in step:
            if not self.cancelled:
                self.wait_for(lambda m: m.get("method") == "session/cancel")
        elif "permission" in step:
            self.ask("session/request_permission", {"sessionId": session, **step["permission"]})
        elif "request" in step:
            self.ask(step["request"]["method"], step["request"].get("params", {}))

    def ask(self, method: str, params: dict[str, Any]) -> None:
        self.next_id += 1
        request_id = f"agent-{self.next_id}"
        self.send({"id": request_id, "method": method, "params": params})
        self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def run(self) -> None:
        while (message := self.read()) is not None:
            self.handle(message)


# An agent that starts asking, as Gemini CLI does: agentdoc's default policy needs no call.
MODES = {
    "currentModeId": "default",
    "availableModes": [{"id": "default", "name": "Ask"}, {"id": "yolo", "name": "Allow all"}],
}


def main() -> None:
    script = json.loads(Path(sys.argv[1]).read_text())
    log = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    Agent(script, log).run()


if __name__ == "__main__":
    main()
