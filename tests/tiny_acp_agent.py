"""A tiny ACP agent for `doctor`'s handshake: answers `initialize` the way argv[1] says.

ok (default): protocol 1 with a name, version and capabilities; v2: protocol version 2;
error: a JSON-RPC error (as an agent that wants a login might); garbage: a line that is not
JSON, then exit; crash: a message on stderr, exit 3; silent: never answer.
"""

from __future__ import annotations

import json
import sys

OK = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "sessionCapabilities": {"resume": {}},
        "promptCapabilities": {"image": True},
    },
    "agentInfo": {"name": "tiny-agent", "version": "1.2.3"},
    "authMethods": [],
}


def answer(mode: str, request_id: object) -> dict[str, object] | None:
    if mode == "v2":
        return {"id": request_id, "result": {**OK, "protocolVersion": 2}}
    if mode == "error":
        return {"id": request_id, "error": {"code": -32000, "message": "Authentication required"}}
    if mode == "silent":
        return None
    return {"id": request_id, "result": OK}


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
    for line in sys.stdin:
        if mode == "crash":
            print("tiny agent: cannot start, config missing", file=sys.stderr)
            return 3
        if mode == "garbage":
            print("Welcome! This is not JSON-RPC.", flush=True)
            return 0
        request = json.loads(line)
        reply = answer(mode, request.get("id"))
        if reply is not None:
            print(json.dumps({"jsonrpc": "2.0", **reply}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
