"""HTTP plumbing of the offline vendor APIs: the loopback server, and one exchange per request."""

from __future__ import annotations

import contextlib
import http.server
import json
import logging
import socket
import socketserver
import struct
import threading
from collections.abc import Mapping
from typing import Any, Protocol
from urllib.parse import urlsplit

from agentdoc.agents.fakeapi.dialect import Dialect, ReplyContext, Route
from agentdoc.agents.fakeapi.script import (
    Answer,
    Failure,
    HttpError,
    Reply,
)
from agentdoc.agents.fakeapi.wire import (
    RecordedRequest,
    checkpoint_due,
    status_for_error_type,
)

logger = logging.getLogger(__name__)

_RESET_GRACE_SECONDS = 0.1


class FakeMessagesAPI(Protocol):
    """What the transport needs of the server that owns the script (kept here, not imported,
    so the two modules do not import each other)."""

    delta_delay: float
    dialect: Dialect
    _stopping: threading.Event

    def _record(self, request: RecordedRequest) -> None: ...
    def _route(self, request: RecordedRequest) -> Route: ...
    def _side_answer(self, request: RecordedRequest) -> Answer | dict[str, Any]: ...
    def _next_answer(self) -> Answer: ...
    def _hold(self) -> None: ...
    def _sleep(self, seconds: float) -> bool: ...
    def _assign_ids(self, reply: Reply) -> Reply: ...
    def _new_message_id(self) -> str: ...
    def _new_request_id(self) -> str: ...


class LoopbackServer(http.server.ThreadingHTTPServer):
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
    server: LoopbackServer

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
        request = self._record(b"")
        if self.server.api._route(request) == "side":
            self._answer_side(request)
        else:
            self._answer_probe(with_body=True)

    def do_POST(self) -> None:
        api = self.server.api
        try:
            request = self._record(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            route = api._route(request)
            if route == "unknown":
                self.send_api_error(HttpError(404, "not_found_error", f"Not found: {self.path}"))
            elif not request.body:
                self.send_api_error(HttpError(400, "invalid_request_error", "Body is not JSON"))
            elif route == "side":
                self._answer_side(request)
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

    def _answer_side(self, request: RecordedRequest) -> None:
        answer = self.server.api._side_answer(request)
        if isinstance(answer, dict):
            self.send_json(200, answer, {})
        else:
            _Exchange(self, self.server.api, request).run(answer)

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
        body = self.server.api.dialect.error_body(error, request_id)
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
    """Answers one model call with a scripted answer, in the API's dialect."""

    def __init__(self, handler: _Handler, api: FakeMessagesAPI, request: RecordedRequest) -> None:
        self.handler = handler
        self.api = api
        self.dialect = api.dialect
        self.request = request
        self.model = self.dialect.model_of(request)
        self.input_tokens = self.dialect.input_tokens(request)

    def _context(self) -> ReplyContext:
        return ReplyContext(self.api._new_message_id(), self.model, self.input_tokens)

    def run(self, answer: Answer) -> None:
        if isinstance(answer, HttpError):
            self.handler.send_api_error(answer)
            return
        if not self.api._sleep(answer.first_byte_delay):
            return
        reply = self.api._assign_ids(answer)
        if self.dialect.streams(self.request):
            self._stream(reply)
        else:
            self._respond_whole(reply)

    def _stream(self, reply: Reply) -> None:
        headers = {"request-id": self.api._new_request_id(), "Cache-Control": "no-cache"}
        headers["Transfer-Encoding"] = "chunked"
        self.handler.start_response(200, "text/event-stream", headers)
        delay = self.api.delta_delay if reply.delta_delay is None else reply.delta_delay
        events = self.dialect.events(reply, self._context())
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
            error = self.dialect.stream_error(fail, self.api._new_request_id())
            self.handler.write_chunk(error.encode())
        elif fail.mode == "hang" and not self.api._sleep(fail.seconds):
            return
        self.handler.end_chunks()  # a clean end of the body, without the stop events

    def _respond_whole(self, reply: Reply) -> None:
        if reply.pause_after_deltas is not None:
            self.api._hold()
        fail = reply.fail
        if fail is None:
            body = self.dialect.whole(reply, self._context())
            self.handler.send_json(200, body, {"request-id": self.api._new_request_id()})
        elif fail.mode == "sse_error":
            status = status_for_error_type(fail.error_type)
            self.handler.send_api_error(HttpError(status, fail.error_type, fail.message))
        elif fail.mode == "truncate":
            self._send_truncated_json(reply)
        elif fail.mode == "disconnect" or self.api._sleep(fail.seconds):
            self.handler.reset()

    def _send_truncated_json(self, reply: Reply) -> None:
        payload = json.dumps(self.dialect.whole(reply, self._context())).encode()
        headers = {"request-id": self.api._new_request_id(), "Content-Length": str(len(payload))}
        self.handler.start_response(200, "application/json", headers)
        self.handler.wfile.write(payload[: len(payload) // 2])
        self.handler.close_connection = True
