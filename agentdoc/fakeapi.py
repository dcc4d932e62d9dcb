"""An offline stand-in for the Anthropic Messages API, serving scripted replies on loopback.

`agentdoc demo` points the real Claude Code CLI at it so a newcomer can watch a canned reply
stream into a document without an account, and the end-to-end tests use it to drive the CLI
through success, HTTP errors and mid-stream failures. It implements only what the CLI uses:
`HEAD /`, and `POST /v1/messages` answered as an SSE stream or, for the CLI's non-streaming
fallback after a failed stream, as one JSON message.

A script is a sequence of JSON-like entries (a JSON file works: `load_script`). Each POST
consumes the next entry, streaming or not; when the script runs out, the `default` entry answers.

* `[block, ...]`: a successful message. Blocks: `{"type":"text","text":...}`,
  `{"type":"thinking","thinking":...,"signature":...}`, `{"type":"redacted_thinking","data":...}`,
  `{"type":"tool_use","name":...,"input":{...}}` (ids `toolu_fake_<n>` are assigned).
* `{"content": [...], ...options}`: the same, with `chunk_chars` (delta size; default one word
  plus its trailing space), `delta_delay` seconds or `delay_ms` (per text/thinking delta),
  `first_byte_delay_ms`, `stop_reason` (default `tool_use` or `end_turn`),
  `pause_after_deltas: N` (hold the stream after N text/thinking deltas until `release()`), and
  `fail: {"mode": M, "after_deltas": N, ...}` where M is `disconnect` (TCP reset), `sse_error`
  (`error_type`, `message`: an SSE `error` event), `hang` (`seconds`: silence, then the body
  ends) or `truncate` (the body ends without the stop events). A non-streaming request gets the
  nearest equivalent: a reset, an HTTP error, a reset after the hang, or half a JSON body.
* `{"status": 500, "error_type": ..., "message": ..., "retry_after": ...}`: an HTTP error with
  the Anthropic error JSON. The fixture spelling `{"content": [...], "fail": {"mode": "http",
  "status": 500}}` means the same.
* `times` (or `repeat`) on a dict entry: how many consecutive requests it answers (default 1;
  `"always"` or -1: every request from then on).
"""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import re
import socket
import socketserver
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypeAlias, cast
from urllib.parse import urlsplit

logger = logging.getLogger(__name__)

ContentBlock: TypeAlias = dict[str, Any]
ScriptEntry: TypeAlias = list[ContentBlock] | dict[str, Any]
FailMode: TypeAlias = Literal["disconnect", "sse_error", "hang", "truncate"]

ERROR_TYPES: Mapping[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES: Mapping[int, str] = {
    400: "Invalid request",
    401: "invalid x-api-key",
    403: "Permission denied",
    404: "Not found",
    413: "Request too large",
    429: "Rate limited",
    500: "Internal server error",
    529: "Overloaded",
}
_STATUS_BY_ERROR_TYPE = {kind: status for status, kind in ERROR_TYPES.items()}
_FAIL_MODES = ("disconnect", "sse_error", "hang", "truncate")
_REPLY_KEYS = {
    "content", "chunk_chars", "delta_delay", "delay_ms", "first_byte_delay_ms",
    "pause_after_deltas", "fail", "stop_reason", "times", "repeat",
}  # fmt: skip
_HTTP_ERROR_KEYS = {"status", "error_type", "message", "times", "repeat", "retry_after"}
_REQUIRED_BLOCK_KEYS: Mapping[str, tuple[str, ...]] = {
    "text": ("text",),
    "thinking": ("thinking",),
    "redacted_thinking": ("data",),
    "tool_use": ("name",),
}
_TOOL_JSON_CHUNK = 24
_STOP_JOIN_SECONDS = 5.0
_RESET_GRACE_SECONDS = 0.1
_FALLBACK_REPLY: ScriptEntry = [{"type": "text", "text": "(no scripted reply)"}]


@dataclass(frozen=True)
class Failure:
    """How a scripted reply breaks after `after_deltas` text/thinking deltas."""

    mode: FailMode
    after_deltas: int = 0
    error_type: str = "overloaded_error"
    message: str = "Overloaded"
    seconds: float = 30.0


@dataclass(frozen=True)
class Reply:
    """A successful (possibly sabotaged) assistant message."""

    content: tuple[ContentBlock, ...]
    chunk_chars: int | None = None
    delta_delay: float | None = None
    first_byte_delay: float = 0.0
    pause_after_deltas: int | None = None
    fail: Failure | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class HttpError:
    """An error answered before any body byte, with the Anthropic error JSON."""

    status: int
    error_type: str
    message: str
    retry_after: float | None = None


Answer: TypeAlias = Reply | HttpError


@dataclass(frozen=True)
class PlannedAnswer:
    """A parsed script entry: the answer and how many requests get it (None: all of them)."""

    answer: Answer
    times: int | None = 1


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    def user_texts(self) -> list[str]:
        """Text of the user messages, in order, without the CLI's `<system-reminder>` blocks."""
        texts: list[str] = []
        for message in self.messages():
            if message.get("role") == "user":
                texts.extend(_user_message_texts(message.get("content")))
        return texts


@dataclass(frozen=True)
class SseEvent:
    """One server-sent event; `counted` marks the text/thinking deltas that script points count."""

    name: str
    data: dict[str, Any]
    counted: bool = False

    def encode(self) -> bytes:
        return f"event: {self.name}\ndata: {json.dumps(self.data)}\n\n".encode()


def _user_message_texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [] if _is_reminder(content) else [content]
    blocks = content if isinstance(content, list) else []
    return [
        block["text"]
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
        and not _is_reminder(block["text"])
    ]


def _is_reminder(text: str) -> bool:
    return text.lstrip().startswith("<system-reminder>")


# --- script parsing (pure) ---------------------------------------------------------------


def parse_entry(entry: ScriptEntry) -> PlannedAnswer:
    """Validate one script entry; raises ValueError with the reason if it is malformed."""
    if isinstance(entry, list):
        return PlannedAnswer(Reply(content=_parse_content(entry)))
    if not isinstance(entry, dict):
        raise ValueError(f"script entry must be a list of blocks or a dict, got {entry!r}")
    times = _parse_times(entry.get("times", entry.get("repeat", 1)))
    if "content" not in entry and "status" in entry:
        _reject_unknown(entry, _HTTP_ERROR_KEYS)
        return PlannedAnswer(_parse_http_error(entry), times)
    _reject_unknown(entry, _REPLY_KEYS)
    fail = entry.get("fail")
    if isinstance(fail, dict) and fail.get("mode") == "http":
        return PlannedAnswer(_parse_http_error(fail), times)
    return PlannedAnswer(_parse_reply(entry), times)


def _parse_reply(entry: dict[str, Any]) -> Reply:
    delay = entry.get("delta_delay")
    if delay is None and "delay_ms" in entry:
        delay = float(entry["delay_ms"]) / 1000
    chunk = entry.get("chunk_chars")
    if chunk is not None and (not isinstance(chunk, int) or chunk < 1):
        raise ValueError(f"chunk_chars must be a positive integer, got {chunk!r}")
    pause = entry.get("pause_after_deltas")
    return Reply(
        content=_parse_content(entry.get("content", [])),
        chunk_chars=chunk,
        delta_delay=None if delay is None else float(delay),
        first_byte_delay=float(entry.get("first_byte_delay_ms", 0)) / 1000,
        pause_after_deltas=None if pause is None else int(pause),
        fail=None if entry.get("fail") is None else _parse_failure(entry["fail"]),
        stop_reason=entry.get("stop_reason"),
    )


def _parse_failure(raw: Any) -> Failure:
    if not isinstance(raw, dict) or raw.get("mode") not in _FAIL_MODES:
        raise ValueError(f"fail needs a mode out of {_FAIL_MODES}, got {raw!r}")
    return Failure(
        mode=raw["mode"],
        after_deltas=int(raw.get("after_deltas", 0)),
        error_type=str(raw.get("error_type", "overloaded_error")),
        message=str(raw.get("message", "Overloaded")),
        seconds=float(raw.get("seconds", 30.0)),
    )


def _parse_http_error(raw: dict[str, Any]) -> HttpError:
    status = raw.get("status")
    if not isinstance(status, int) or status not in ERROR_TYPES:
        raise ValueError(f"HTTP error status must be one of {sorted(ERROR_TYPES)}, got {status!r}")
    retry_after = raw.get("retry_after")
    return HttpError(
        status=status,
        error_type=str(raw.get("error_type", ERROR_TYPES[status])),
        message=str(raw.get("message", _DEFAULT_MESSAGES[status])),
        retry_after=None if retry_after is None else float(retry_after),
    )


def _parse_times(raw: Any) -> int | None:
    if raw == "always" or raw == -1:
        return None
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        return raw
    raise ValueError(f'times/repeat must be a positive integer, -1 or "always", got {raw!r}')


def _reject_unknown(entry: dict[str, Any], allowed: set[str]) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise ValueError(f"unknown script keys {sorted(unknown)} in {entry!r}")


def _parse_content(blocks: Any) -> tuple[ContentBlock, ...]:
    if not isinstance(blocks, list):
        raise ValueError(f"content must be a list of blocks, got {blocks!r}")
    return tuple(_parse_block(block) for block in blocks)


def _parse_block(block: Any) -> ContentBlock:
    kind = block.get("type") if isinstance(block, dict) else None
    if not isinstance(kind, str) or kind not in _REQUIRED_BLOCK_KEYS:
        raise ValueError(f"unsupported content block {block!r}")
    missing = [key for key in _REQUIRED_BLOCK_KEYS[kind] if key not in block]
    if missing:
        raise ValueError(f"{kind} block lacks {missing}: {block!r}")
    if kind == "thinking":
        return {
            "type": kind,
            "thinking": block["thinking"],
            "signature": block.get("signature", "sig"),
        }
    if kind == "tool_use":
        return tool_use_block(block.get("id"), block["name"], dict(block.get("input", {})))
    return dict(block)


def tool_use_block(tool_id: str | None, name: str, arguments: dict[str, Any]) -> ContentBlock:
    """A tool_use block in the API's key order; the id is left out until the server assigns it."""
    id_part = {} if tool_id is None else {"id": tool_id}
    return {"type": "tool_use", **id_part, "name": name, "input": arguments}


def substitute(value: Any, variables: Mapping[str, str]) -> Any:
    """Replace `{{name}}` in every string of a JSON-like value (fixtures use `{{cwd}}`)."""
    if isinstance(value, str):
        return re.sub(r"\{\{(\w+)\}\}", lambda m: variables.get(m[1], m[0]), value)
    if isinstance(value, list):
        return [substitute(item, variables) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, variables) for key, item in value.items()}
    return value


def load_script(
    path: Path | str, *, variables: Mapping[str, str] | None = None
) -> list[ScriptEntry]:
    """Read a JSON script file (a list of entries), validating every entry."""
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{path}: a script is a JSON list of entries")
    script = cast(list[ScriptEntry], substitute(raw, variables or {}))
    for entry in script:
        parse_entry(entry)
    return script


# --- wire format (pure) ------------------------------------------------------------------


def split_text(text: str, chunk_chars: int | None) -> list[str]:
    """Delta pieces: fixed-size character chunks, or one word plus its trailing space each."""
    if chunk_chars:
        return [text[i : i + chunk_chars] for i in range(0, len(text), chunk_chars)]
    return re.findall(r"\S+\s*|\s+", text)


def estimate_tokens(chars: int) -> int:
    return max(1, chars // 4)


def output_chars(content: Sequence[ContentBlock]) -> int:
    """Characters the model "generated": visible text, thinking, tool arguments."""
    return sum(_generated_chars(block) for block in content)


def _generated_chars(block: ContentBlock) -> int:
    if block["type"] == "tool_use":
        return len(json.dumps(block["input"]))
    return len(str(block.get("text") or block.get("thinking") or block.get("data") or ""))


def stop_reason_for(reply: Reply) -> str:
    if reply.stop_reason:
        return reply.stop_reason
    return "tool_use" if any(b["type"] == "tool_use" for b in reply.content) else "end_turn"


def usage(input_tokens: int, output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
    }


def message_json(reply: Reply, message_id: str, model: str, input_tokens: int) -> dict[str, Any]:
    """The whole message, as a non-streaming response body (tool ids must be assigned)."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(reply.content),
        "stop_reason": stop_reason_for(reply),
        "stop_sequence": None,
        "usage": usage(input_tokens, estimate_tokens(output_chars(reply.content))),
    }


def error_json(error_type: str, message: str, request_id: str) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type, "message": message},
        "request_id": request_id,
    }


def message_events(
    reply: Reply, message_id: str, model: str, input_tokens: int
) -> Iterator[SseEvent]:
    """The SSE events of a complete streamed message (tool ids must be assigned)."""
    start = message_json(reply, message_id, model, input_tokens)
    start.update(content=[], stop_reason=None, usage=usage(input_tokens, 1))
    yield SseEvent("message_start", {"type": "message_start", "message": start})
    yield SseEvent("ping", {"type": "ping"})
    for index, block in enumerate(reply.content):
        yield from _block_events(index, block, reply.chunk_chars)
    delta = {"stop_reason": stop_reason_for(reply), "stop_sequence": None}
    out = {"output_tokens": estimate_tokens(output_chars(reply.content))}
    yield SseEvent("message_delta", {"type": "message_delta", "delta": delta, "usage": out})
    yield SseEvent("message_stop", {"type": "message_stop"})


def _block_events(index: int, block: ContentBlock, chunk_chars: int | None) -> Iterator[SseEvent]:
    kind = block["type"]
    if kind == "text":
        yield _block_start(index, {"type": "text", "text": ""})
        for piece in split_text(block["text"], chunk_chars):
            yield _delta(index, {"type": "text_delta", "text": piece}, counted=True)
    elif kind == "thinking":
        yield _block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        for piece in split_text(block["thinking"], chunk_chars):
            yield _delta(index, {"type": "thinking_delta", "thinking": piece}, counted=True)
        yield _delta(index, {"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        yield _block_start(index, {**block, "input": {}})
        arguments = json.dumps(block["input"])
        for piece in split_text(arguments, chunk_chars or _TOOL_JSON_CHUNK):
            yield _delta(index, {"type": "input_json_delta", "partial_json": piece})
    else:  # redacted_thinking arrives whole, without deltas
        yield _block_start(index, block)
    yield SseEvent("content_block_stop", {"type": "content_block_stop", "index": index})


def _block_start(index: int, block: ContentBlock) -> SseEvent:
    data = {"type": "content_block_start", "index": index, "content_block": block}
    return SseEvent("content_block_start", data)


def _delta(index: int, delta: dict[str, Any], *, counted: bool = False) -> SseEvent:
    data = {"type": "content_block_delta", "index": index, "delta": delta}
    return SseEvent("content_block_delta", data, counted)


def checkpoint_due(event: SseEvent, deltas_sent: int, after: int) -> bool:
    """Whether a pause/failure point set at `after` deltas fires before `event` is sent.

    A point beyond the last delta fires before `message_delta`, so it always fires once.
    """
    return event.name == "message_delta" or (event.counted and deltas_sent >= after)


def input_tokens_for(body: Mapping[str, Any]) -> int:
    prompt = json.dumps([body.get("system"), body.get("messages")])
    return estimate_tokens(len(prompt))


def status_for_error_type(error_type: str) -> int:
    return _STATUS_BY_ERROR_TYPE.get(error_type, 500)


# --- server -----------------------------------------------------------------------------


@dataclass
class _Slot:
    answer: Answer
    remaining: int | None


@dataclass
class _Counters:
    message: int = 0
    tool: int = 0
    request: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, kind: Literal["message", "tool", "request"]) -> int:
        with self.lock:
            value = int(getattr(self, kind)) + 1
            setattr(self, kind, value)
            return value


class FakeMessagesAPI:
    """Serves a script of replies to the Claude Code CLI on loopback; see the module docstring."""

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        default: ScriptEntry | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        delta_delay: float = 0.0,
    ) -> None:
        self._queue = [_slot(entry) for entry in script]
        self._default = parse_entry(_FALLBACK_REPLY if default is None else default).answer
        self._address = (host, port)
        self.delta_delay = delta_delay
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._paused = 0
        self._release_generation = 0
        self._counters = _Counters()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeMessagesAPI:
        if self._server is not None:
            raise RuntimeError("FakeMessagesAPI is already running")
        self._stopping.clear()
        self._server = _Server(self._address, self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakeapi"
        )
        self._thread.daemon = True  # a forgotten stop() must not keep the interpreter alive
        self._thread.start()
        logger.debug("fake Messages API listening on %s", self.base_url)
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        server.shutdown()
        server.abort_connections()
        server.join_handlers(_STOP_JOIN_SECONDS)
        server.server_close()
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._cond:
            return self._messages_posts()

    @property
    def all_requests(self) -> list[RecordedRequest]:
        """Every request received, including `HEAD /` probes."""
        with self._cond:
            return list(self._requests)

    def add(self, *entries: ScriptEntry) -> None:
        slots = [_slot(entry) for entry in entries]
        with self._cond:
            self._queue.extend(slots)

    def wait_for_requests(self, n: int, timeout: float = 30.0) -> list[RecordedRequest]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._messages_posts()) >= n, timeout):
                got = len(self._messages_posts())
                raise TimeoutError(f"expected {n} POST /v1/messages requests, got {got}")
            return self._messages_posts()

    def wait_paused(self, timeout: float = 30.0) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._paused > 0, timeout):
                raise TimeoutError("no stream reached its pause point")

    def release(self) -> None:
        """Let every stream held at a pause point continue (no effect on later pauses)."""
        with self._cond:
            self._release_generation += 1
            self._paused = 0
            self._cond.notify_all()

    # --- used by the request handlers ---

    def _messages_posts(self) -> list[RecordedRequest]:
        return [r for r in self._requests if _is_messages_post(r)]

    def _record(self, request: RecordedRequest) -> None:
        with self._cond:
            self._requests.append(request)
            self._cond.notify_all()

    def _next_answer(self) -> Answer:
        with self._cond:
            if not self._queue:
                return self._default
            slot = self._queue[0]
            if slot.remaining is not None:
                slot.remaining -= 1
                if slot.remaining == 0:
                    self._queue.pop(0)
            return slot.answer

    def _hold(self) -> None:
        """Block the calling stream until `release()` or `stop()`."""
        with self._cond:
            generation = self._release_generation
            self._paused += 1
            self._cond.notify_all()
            while self._release_generation == generation and not self._stopping.is_set():
                self._cond.wait()

    def _sleep(self, seconds: float) -> bool:
        """Wait, cut short by stop(); True if the server is still running."""
        if seconds > 0:
            self._stopping.wait(seconds)
        return not self._stopping.is_set()

    def _assign_ids(self, reply: Reply) -> Reply:
        content = tuple(
            tool_use_block(
                f"toolu_fake_{self._counters.next('tool')}", block["name"], block["input"]
            )
            if block["type"] == "tool_use" and "id" not in block
            else block
            for block in reply.content
        )
        return replace(reply, content=content)

    def _new_message_id(self) -> str:
        return f"msg_fake_{self._counters.next('message')}"

    def _new_request_id(self) -> str:
        return f"req_fake_{self._counters.next('request')}"


def _slot(entry: ScriptEntry) -> _Slot:
    planned = parse_entry(entry)
    return _Slot(planned.answer, planned.times)


def _is_messages_post(request: RecordedRequest) -> bool:
    return request.method == "POST" and urlsplit(request.path).path == "/v1/messages"


class _Server(http.server.ThreadingHTTPServer):
    """Tracks connections and handler threads so stop() can end them without waiting long."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], api: FakeMessagesAPI) -> None:
        self.api = api
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._handlers: list[threading.Thread] = []
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which may leave loopback.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), daemon=True
        )
        with self._lock:
            self._connections.add(request)
            self._handlers = [t for t in self._handlers if t.is_alive()]
            self._handlers.append(thread)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        # Under the lock, so abort_connections never touches a socket being closed.
        with self._lock:
            self._connections.discard(request)
            super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.exception("fake Messages API: error while answering %s", client_address)

    def abort_connections(self) -> None:
        with self._lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def join_handlers(self, timeout: float) -> None:
        with self._lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(timeout)
            if thread.is_alive():
                logger.warning("fake Messages API: handler %s did not stop", thread.name)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake Messages API: " + format, *args)

    def setup(self) -> None:
        super().setup()
        # Each SSE event must reach the CLI at once, or pause points would not be mid-stream.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_HEAD(self) -> None:
        self._record(b"")
        self._answer_probe(with_body=False)

    def do_GET(self) -> None:
        self._record(b"")
        self._answer_probe(with_body=True)

    def do_POST(self) -> None:
        api = self.server.api
        try:
            request = self._record(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if not _is_messages_post(request):
                self.send_api_error(HttpError(404, "not_found_error", f"Not found: {self.path}"))
            elif not request.body:
                self.send_api_error(HttpError(400, "invalid_request_error", "Body is not JSON"))
            else:
                _Exchange(self, api, request).run(api._next_answer())
        except OSError as exc:  # the client went away, or stop() cut the connection
            logger.debug("fake Messages API: connection ended: %s", exc)
            self.close_connection = True

    def _record(self, raw: bytes) -> RecordedRequest:
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        headers = {key.lower(): value for key, value in self.headers.items()}
        request = RecordedRequest(
            self.command, self.path, headers, body if isinstance(body, dict) else {}
        )
        self.server.api._record(request)
        return request

    def _answer_probe(self, *, with_body: bool) -> None:
        if urlsplit(self.path).path == "/":
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
        elif with_body:
            self.send_api_error(HttpError(404, "not_found_error", f"Not found: {self.path}"))
        else:
            self.send_response(404)
            self.send_header("Connection", "close")
            self.end_headers()

    def send_api_error(self, error: HttpError) -> None:
        request_id = self.server.api._new_request_id()
        body = error_json(error.error_type, error.message, request_id)
        headers = {"request-id": request_id}
        if error.retry_after is not None:
            headers["retry-after"] = f"{error.retry_after:g}"
        self.send_json(error.status, body, headers)

    def send_json(self, status: int, body: dict[str, Any], headers: Mapping[str, str]) -> None:
        payload = json.dumps(body).encode()
        self.start_response(
            status, "application/json", {**headers, "Content-Length": str(len(payload))}
        )
        self.wfile.write(payload)

    def start_response(self, status: int, content_type: str, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Connection", "close")
        self.end_headers()

    def write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def reset(self) -> None:
        """Abort the connection with a TCP RST, as a dropped upstream connection looks."""
        self.close_connection = True
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()  # drops the makefile reference, so close() really closes now
        self.connection.close()


class _Exchange:
    """Answers one POST /v1/messages with a scripted answer."""

    def __init__(self, handler: _Handler, api: FakeMessagesAPI, request: RecordedRequest) -> None:
        self.handler = handler
        self.api = api
        self.request = request
        self.model = str(request.body.get("model", "claude-fake"))
        self.input_tokens = input_tokens_for(request.body)

    def run(self, answer: Answer) -> None:
        if isinstance(answer, HttpError):
            self.handler.send_api_error(answer)
            return
        if not self.api._sleep(answer.first_byte_delay):
            return
        reply = self.api._assign_ids(answer)
        if self.request.stream:
            self._stream(reply)
        else:
            self._respond_whole(reply)

    def _stream(self, reply: Reply) -> None:
        headers = {"request-id": self.api._new_request_id(), "Cache-Control": "no-cache"}
        headers["Transfer-Encoding"] = "chunked"
        self.handler.start_response(200, "text/event-stream", headers)
        delay = self.api.delta_delay if reply.delta_delay is None else reply.delta_delay
        events = message_events(reply, self.api._new_message_id(), self.model, self.input_tokens)
        sent, pause_at = 0, reply.pause_after_deltas
        for event in events:
            if pause_at is not None and checkpoint_due(event, sent, pause_at):
                pause_at = None
                self.api._hold()
            if reply.fail and checkpoint_due(event, sent, reply.fail.after_deltas):
                self._break_stream(reply.fail)
                return
            if self.api._stopping.is_set():
                return
            self.handler.write_chunk(event.encode())
            if event.counted:
                sent += 1
                self.api._sleep(delay)
        self.handler.end_chunks()

    def _break_stream(self, fail: Failure) -> None:
        if fail.mode == "disconnect":
            # A reset discards whatever the client has not read yet; give it a moment to take
            # the deltas already sent, so the failure really happens mid-message.
            self.api._sleep(_RESET_GRACE_SECONDS)
            self.handler.reset()
            return
        if fail.mode == "sse_error":
            request_id = self.api._new_request_id()
            error = SseEvent("error", error_json(fail.error_type, fail.message, request_id))
            self.handler.write_chunk(error.encode())
        elif fail.mode == "hang" and not self.api._sleep(fail.seconds):
            return
        self.handler.end_chunks()  # a clean end of the body, without the stop events

    def _respond_whole(self, reply: Reply) -> None:
        if reply.pause_after_deltas is not None:
            self.api._hold()
        fail = reply.fail
        if fail is None:
            body = message_json(reply, self.api._new_message_id(), self.model, self.input_tokens)
            self.handler.send_json(200, body, {"request-id": self.api._new_request_id()})
        elif fail.mode == "sse_error":
            status = status_for_error_type(fail.error_type)
            self.handler.send_api_error(HttpError(status, fail.error_type, fail.message))
        elif fail.mode == "truncate":
            self._send_truncated_json(reply)
        elif fail.mode == "disconnect" or self.api._sleep(fail.seconds):
            self.handler.reset()

    def _send_truncated_json(self, reply: Reply) -> None:
        body = message_json(reply, self.api._new_message_id(), self.model, self.input_tokens)
        payload = json.dumps(body).encode()
        headers = {"request-id": self.api._new_request_id(), "Content-Length": str(len(payload))}
        self.handler.start_response(200, "application/json", headers)
        self.handler.wfile.write(payload[: len(payload) // 2])
        self.handler.close_connection = True
