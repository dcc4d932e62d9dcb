"""The HTTP server of the offline vendor APIs: each model call gets the next script entry.

`FakeMessagesAPI` speaks Anthropic's Messages API (Claude Code, OpenCode); `FakeGeminiAPI` and
`FakeResponsesAPI` are the same server speaking Gemini's and OpenAI's Responses dialects, and
`FakeChatAPI` OpenAI's Chat Completions.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

from agentdoc.agents.fakeapi.chat import CHAT
from agentdoc.agents.fakeapi.dialect import ANTHROPIC, Dialect, Route
from agentdoc.agents.fakeapi.gemini import GEMINI
from agentdoc.agents.fakeapi.responses import RESPONSES
from agentdoc.agents.fakeapi.script import (
    FALLBACK_REPLY,
    Answer,
    Reply,
    ScriptEntry,
    parse_entry,
    tool_use_block,
)
from agentdoc.agents.fakeapi.transport import LoopbackServer
from agentdoc.agents.fakeapi.wire import RecordedRequest

logger = logging.getLogger(__name__)

_STOP_JOIN_SECONDS = 5.0
_SIDE_REPLY = parse_entry([{"type": "text", "text": "Side answer"}]).answer


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
    """Serves a script of replies to an agent on loopback; see the module docstrings.

    `side_calls` picks out model calls an agent makes besides the conversation (OpenCode's
    title request): they get a short fixed reply and never take a scripted entry.
    """

    dialect: Dialect = ANTHROPIC

    def __init__(
        self,
        script: Sequence[ScriptEntry] = (),
        *,
        default: ScriptEntry | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        delta_delay: float = 0.0,
        side_calls: Callable[[RecordedRequest], bool] | None = None,
    ) -> None:
        self._side_calls = side_calls
        self._queue = [_slot(entry) for entry in script]
        self._default = parse_entry(FALLBACK_REPLY if default is None else default).answer
        self._address = (host, port)
        self.delta_delay = delta_delay
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._requests: list[RecordedRequest] = []
        self._paused = 0
        self._release_generation = 0
        self._counters = _Counters()
        self._server: LoopbackServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        if self._server is not None:
            raise RuntimeError("FakeMessagesAPI is already running")
        self._stopping.clear()
        self._server = LoopbackServer(self._address, self)
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

    def __enter__(self) -> Self:
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

    def clear(self) -> None:
        """Drop the entries not answered yet, so the next request gets what is added next.

        For a script that must answer however many requests the CLI makes (`times: always`):
        how many that is differs between CLI releases.
        """
        with self._cond:
            self._queue.clear()

    def wait_for_requests(self, n: int, timeout: float = 30.0) -> list[RecordedRequest]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._messages_posts()) >= n, timeout):
                got = len(self._messages_posts())
                raise TimeoutError(f"expected {n} {self.dialect.name} model calls, got {got}")
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

    def user_texts(self, request: RecordedRequest) -> list[str]:
        """The user's texts a recorded model call carried, in this API's dialect."""
        return self.dialect.user_texts(request)

    def _messages_posts(self) -> list[RecordedRequest]:
        return [r for r in self._requests if self._route(r) == "model"]

    def _route(self, request: RecordedRequest) -> Route:
        route = self.dialect.route(request)
        if route == "model" and self._side_calls is not None and self._side_calls(request):
            return "side"
        return route

    def _side_answer(self, request: RecordedRequest) -> Answer | dict[str, Any]:
        """A side call's fixed answer: a model call `side_calls` picked out gets a short reply."""
        if self.dialect.route(request) == "model":
            return _SIDE_REPLY
        return self.dialect.side_answer(request)

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


class FakeGeminiAPI(FakeMessagesAPI):
    """The Gemini API (`:streamGenerateContent`), for Gemini CLI."""

    dialect = GEMINI


class FakeResponsesAPI(FakeMessagesAPI):
    """The OpenAI Responses API (`/v1/responses`), for Codex."""

    dialect = RESPONSES


class FakeChatAPI(FakeMessagesAPI):
    """The OpenAI Chat Completions API (`/v1/chat/completions`), for Qwen Code and pi."""

    dialect = CHAT


def _slot(entry: ScriptEntry) -> _Slot:
    planned = parse_entry(entry)
    return _Slot(planned.answer, planned.times)
