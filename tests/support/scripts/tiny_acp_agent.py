"""A tiny ACP agent for `doctor`'s handshake: answers `initialize` the way argv[1] says.

ok (default): protocol 1 with a name, version and capabilities, and a session with an asking
mode and two models; nologin: a session needs a login (offered as a method); authstatus: a
session opens, but a notification first says there is no login (as claude-agent-acp does);
nomodes: a session with no modes; nosession: `initialize` answered, `session/new` never;
v2: protocol version 2;
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


SESSION = {
    "sessionId": "tiny-1",
    "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask"}, {"id": "yolo"}]},
    "configOptions": [
        {"id": "model", "category": "model", "currentValue": "m1",
         "options": [{"value": "m1"}, {"value": "m2"}]},
    ],
}  # fmt: skip


def answer(
    mode: str, request_id: object, method: object = "initialize"
) -> dict[str, object] | None:
    if method == "session/new":
        if mode == "authstatus":
            status = {"authStatus": {"kind": "none", "label": "Not logged in"}}
            notice = {"jsonrpc": "2.0", "method": "_auth/status_update", "params": status}
            print(json.dumps(notice), flush=True)
        if mode == "nologin":
            return {
                "id": request_id,
                "error": {"code": -32000, "message": "Authentication required"},
            }
        if mode == "nomodes":
            return {"id": request_id, "result": {"sessionId": "tiny-1"}}
        if mode == "nosession":
            return None
        return {"id": request_id, "result": SESSION}
    if method != "initialize":
        return {"id": request_id, "error": {"code": -32601, "message": f"no {method}"}}
    if mode == "v2":
        return {"id": request_id, "result": {**OK, "protocolVersion": 2}}
    if mode == "error":
        return {"id": request_id, "error": {"code": -32000, "message": "Authentication required"}}
    if mode == "silent":
        return None
    if mode == "nologin":
        login = {"id": "browser", "name": "Log in with your browser"}
        return {"id": request_id, "result": {**OK, "authMethods": [login]}}
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
        reply = answer(mode, request.get("id"), request.get("method"))
        if reply is not None:
            print(json.dumps({"jsonrpc": "2.0", **reply}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
