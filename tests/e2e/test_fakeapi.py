"""Tests for the offline Messages API: script parsing, wire format, server behaviour, real CLI."""

from __future__ import annotations

import http.client
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import (
    Failure,
    HttpError,
    PlannedAnswer,
    Reply,
    ScriptEntry,
    load_script,
    parse_entry,
)
from agentdoc.agents.fakeapi.wire import (
    RecordedRequest,
    SseEvent,
    checkpoint_due,
    message_events,
    split_text,
)
from tests.support.claude_cli import claude_env, require_claude

Event = tuple[str, dict[str, Any]]
TEXT = {"type": "text", "text": "Hello from the fake API."}
THINKING = {"type": "thinking", "thinking": "Let me think.", "signature": "sig-1"}
TOOL = {"type": "tool_use", "name": "Read", "input": {"file_path": "/tmp/notes.txt"}}


@pytest.fixture(autouse=True)
def no_leaked_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 5
    while (leaked := set(threading.enumerate()) - before) and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for threads to finish, not synchronising the test itself
    assert not leaked, f"threads left running: {leaked}"


# --- pure parts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ([TEXT], PlannedAnswer(Reply(content=(TEXT,)))),
        (
            {"content": [TEXT], "chunk_chars": 3, "delta_delay": 0.5, "pause_after_deltas": 2},
            PlannedAnswer(Reply((TEXT,), chunk_chars=3, delta_delay=0.5, pause_after_deltas=2)),
        ),
        (  # the fixture scripts' spelling of delays
            {"content": [TEXT], "delay_ms": 150, "first_byte_delay_ms": 8000},
            PlannedAnswer(Reply((TEXT,), delta_delay=0.15, first_byte_delay=8.0)),
        ),
        (
            {"content": [TEXT], "fail": {"mode": "hang", "after_deltas": 3, "seconds": 40}},
            PlannedAnswer(Reply((TEXT,), fail=Failure("hang", after_deltas=3, seconds=40.0))),
        ),
        (
            {"status": 500, "times": 2},
            PlannedAnswer(HttpError(500, "api_error", "Internal server error"), times=2),
        ),
        (
            {"status": 429, "message": "slow down", "retry_after": 3, "times": "always"},
            PlannedAnswer(HttpError(429, "rate_limit_error", "slow down", 3.0), times=None),
        ),
        (  # the fixture scripts' spelling of an HTTP error
            {"content": [TEXT], "fail": {"mode": "http", "status": 529}, "repeat": -1},
            PlannedAnswer(HttpError(529, "overloaded_error", "Overloaded"), times=None),
        ),
        (
            [{"type": "thinking", "thinking": "x"}],
            PlannedAnswer(Reply(({"type": "thinking", "thinking": "x", "signature": "sig"},))),
        ),
    ],
)
def test_parse_entry(entry: ScriptEntry, expected: PlannedAnswer) -> None:
    assert parse_entry(entry) == expected


@pytest.mark.parametrize(
    "entry",
    [
        [{"type": "image"}],
        [{"type": "text"}],
        [{"type": "tool_use", "input": {}}],
        {"content": [TEXT], "chunk_chars": 0},
        {"content": [TEXT], "fail": {"mode": "explode"}},
        {"content": [TEXT], "typo_key": 1},
        {"status": 418},
        {"status": 500, "times": 0},
        "just a string",
    ],
)
def test_parse_entry_rejects_malformed_entries(entry: Any) -> None:
    with pytest.raises(ValueError):
        parse_entry(entry)


@pytest.mark.parametrize(
    ("text", "chunk_chars", "pieces"),
    [
        ("Hello big world", None, ["Hello ", "big ", "world"]),
        ("a.\nb  c ", None, ["a.\n", "b  ", "c "]),
        ("  lead", None, ["  ", "lead"]),
        ("", None, []),
        ("abcdefg", 3, ["abc", "def", "g"]),
        ("👨‍👩‍👧", 2, ["👨\u200d", "👩\u200d", "👧"]),
    ],
)
def test_split_text(text: str, chunk_chars: int | None, pieces: list[str]) -> None:
    assert split_text(text, chunk_chars) == pieces


@pytest.mark.parametrize(
    ("event", "sent", "after", "due"),
    [
        (SseEvent("content_block_delta", {}, counted=True), 2, 2, True),
        (SseEvent("content_block_delta", {}, counted=True), 1, 2, False),
        (SseEvent("content_block_delta", {}), 5, 2, False),  # signature/json deltas don't count
        (SseEvent("message_delta", {}, closing=True), 0, 99, True),  # a point past the end fires
    ],
)
def test_checkpoint_due(event: SseEvent, sent: int, after: int, due: bool) -> None:
    assert checkpoint_due(event, sent, after) is due


def _shape(events: list[Event]) -> list[str]:
    return [
        f"{name}:{data['delta']['type']}" if name == "content_block_delta" else name
        for name, data in events
    ]


@pytest.mark.parametrize(
    ("content", "shape"),
    [
        (
            [THINKING],
            ["content_block_start"]
            + ["content_block_delta:thinking_delta"] * 3  # "Let ", "me ", "think."
            + ["content_block_delta:signature_delta", "content_block_stop"],
        ),
        (
            [{"type": "redacted_thinking", "data": "opaque"}],
            ["content_block_start", "content_block_stop"],
        ),
        (
            [{**TOOL, "id": "toolu_x"}],
            ["content_block_start"]
            + ["content_block_delta:input_json_delta"] * 2
            + ["content_block_stop"],
        ),
    ],
)
def test_message_events_shape(content: list[dict[str, Any]], shape: list[str]) -> None:
    reply = Reply(content=tuple(content))
    events = [(str(e.name), e.data) for e in message_events(reply, "msg_1", "m", 10)]
    assert _shape(events) == ["message_start", "ping", *shape, "message_delta", "message_stop"]


@pytest.mark.parametrize(
    ("messages", "texts"),
    [
        ([{"role": "user", "content": "plain"}], ["plain"]),
        (
            [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>"},
                        {"type": "text", "text": "first"},
                    ],
                },
                {"role": "system", "content": "agent list"},
                {"role": "assistant", "content": [{"type": "text", "text": "answer"}]},
                {"role": "user", "content": [{"type": "tool_result", "content": "x"}]},
                {"role": "user", "content": [{"type": "text", "text": "second"}]},
            ],
            ["first", "second"],
        ),
        ([], []),
    ],
)
def test_user_texts(messages: list[dict[str, Any]], texts: list[str]) -> None:
    request = RecordedRequest("POST", "/v1/messages", {}, {"messages": messages})
    assert request.user_texts() == texts


def test_load_script_substitutes_variables(tmp_path: Path) -> None:
    script = [[{**TOOL, "input": {"file_path": "{{cwd}}/notes.txt"}}], {"status": 500}]
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    loaded = load_script(path, variables={"cwd": "/work"})
    assert loaded[0] == [{**TOOL, "input": {"file_path": "/work/notes.txt"}}]
    assert loaded[1] == {"status": 500}


def test_load_script_rejects_bad_entries(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([[{"type": "nope"}]]), encoding="utf-8")
    with pytest.raises(ValueError, match="unsupported content block"):
        load_script(path)


# --- the server, through a plain HTTP client ---------------------------------------------


def _connect(api: FakeMessagesAPI) -> http.client.HTTPConnection:
    host, port = api.base_url.removeprefix("http://").split(":")
    return http.client.HTTPConnection(host, int(port), timeout=10)


def _body(stream: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "claude-test", "max_tokens": 100, "system": "be brief"}
    body["messages"] = [{"role": "user", "content": "hello"}]
    return {**body, "stream": True} if stream else body


def _post(
    api: FakeMessagesAPI, body: dict[str, Any] | None = None, path: str = "/v1/messages"
) -> tuple[int, dict[str, str], bytes]:
    conn = _connect(api)
    response: http.client.HTTPResponse | None = None
    try:
        payload = json.dumps(_body() if body is None else body)
        conn.request("POST", path, payload, {"Content-Type": "application/json", "X-Api-Key": "k"})
        response = conn.getresponse()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, headers, response.read()
    finally:
        _close(conn, response)


def _close(conn: http.client.HTTPConnection, response: http.client.HTTPResponse | None) -> None:
    # The response holds its own reference to the socket: close both, or the socket outlives
    # the test and trips a ResourceWarning when it is collected.
    if response is not None:
        response.close()
    conn.close()


def _parse_sse(raw: bytes) -> list[Event]:
    events = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line)
        if fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


def _deltas(events: list[Event], kind: str) -> str:
    key = {"text_delta": "text", "thinking_delta": "thinking", "input_json_delta": "partial_json"}
    return "".join(
        data["delta"][key[kind]]
        for name, data in events
        if name == "content_block_delta" and data["delta"]["type"] == kind
    )


class _StreamReader(threading.Thread):
    """Reads one streamed response event by event, so a test can look at it mid-stream."""

    def __init__(self, api: FakeMessagesAPI) -> None:
        super().__init__()
        self.api = api
        self.events: list[Event] = []
        self.error: BaseException | None = None
        self.changed = threading.Condition()

    def run(self) -> None:
        conn = _connect(self.api)
        response: http.client.HTTPResponse | None = None
        try:
            conn.request("POST", "/v1/messages", json.dumps(_body()))
            response = conn.getresponse()
            lines: list[bytes] = []
            while line := response.readline():
                lines.append(line)
                if line == b"\n":
                    self._add(_parse_sse(b"".join(lines)))
                    lines.clear()
        except (OSError, http.client.HTTPException) as exc:
            self.error = exc
        finally:
            _close(conn, response)

    def _add(self, events: list[Event]) -> None:
        with self.changed:
            self.events.extend(events)
            self.changed.notify_all()

    def wait_until(self, predicate: Callable[[list[Event]], bool], timeout: float = 10) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: predicate(self.events), timeout), self.events


def _count_deltas(events: list[Event]) -> int:
    return sum(name == "content_block_delta" for name, _ in events)


def test_streams_thinking_text_and_tool_use() -> None:
    with FakeMessagesAPI([[THINKING, TEXT, TOOL]]) as api:
        status, headers, raw = _post(api)
    events = _parse_sse(raw)
    assert status == 200
    assert headers["content-type"] == "text/event-stream"
    assert events[0][1]["message"]["id"] == "msg_fake_1"
    assert events[0][1]["message"]["model"] == "claude-test"
    assert events[0][1]["message"]["usage"]["input_tokens"] > 1
    assert events[1][0] == "ping"
    assert _deltas(events, "thinking_delta") == THINKING["thinking"]
    assert _deltas(events, "text_delta") == TEXT["text"]
    assert json.loads(_deltas(events, "input_json_delta")) == TOOL["input"]
    starts = [data["content_block"] for name, data in events if name == "content_block_start"]
    assert starts == [
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "text", "text": ""},
        {"type": "tool_use", "id": "toolu_fake_1", "name": "Read", "input": {}},
    ]
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert events[-2][1]["usage"]["output_tokens"] > 1
    assert events[-1][0] == "message_stop"


def test_stop_reason_end_turn_and_override() -> None:
    script: list[ScriptEntry] = [[TEXT], {"content": [TEXT], "stop_reason": "max_tokens"}]
    with FakeMessagesAPI(script) as api:
        first, second = (_parse_sse(_post(api)[2]) for _ in range(2))
    assert first[-2][1]["delta"]["stop_reason"] == "end_turn"
    assert second[-2][1]["delta"]["stop_reason"] == "max_tokens"
    assert second[0][1]["message"]["id"] == "msg_fake_2"


def test_chunk_chars_controls_delta_size() -> None:
    with FakeMessagesAPI(
        [{"content": [{"type": "text", "text": "abcdefgh"}], "chunk_chars": 3}]
    ) as api:
        events = _parse_sse(_post(api)[2])
    pieces = [d["delta"]["text"] for n, d in events if n == "content_block_delta"]
    assert pieces == ["abc", "def", "gh"]


def test_http_errors_with_times_then_success() -> None:
    script: list[ScriptEntry] = [{"status": 429, "times": 2, "retry_after": 3}, [TEXT]]
    with FakeMessagesAPI(script) as api:
        answers = [_post(api) for _ in range(3)]
    assert [status for status, _, _ in answers] == [429, 429, 200]
    _, headers, raw = answers[0]
    assert headers["retry-after"] == "3"
    error = json.loads(raw)
    assert error["type"] == "error"
    assert error["error"] == {"type": "rate_limit_error", "message": "Rate limited"}
    assert error["request_id"].startswith("req_")
    assert headers["request-id"] == error["request_id"]


def test_always_error_never_runs_out() -> None:
    with FakeMessagesAPI([{"status": 529, "times": "always"}]) as api:
        api.add([TEXT])
        statuses = [_post(api)[0] for _ in range(4)]
    assert statuses == [529] * 4


def test_default_reply_after_script_runs_out() -> None:
    with FakeMessagesAPI([[TEXT]], default=[{"type": "text", "text": "again"}]) as api:
        texts = [_deltas(_parse_sse(_post(api)[2]), "text_delta") for _ in range(3)]
    assert texts == [TEXT["text"], "again", "again"]


def test_builtin_default_reply() -> None:
    with FakeMessagesAPI() as api:
        assert _deltas(_parse_sse(_post(api)[2]), "text_delta") == "(no scripted reply)"


def test_add_appends_while_running() -> None:
    with FakeMessagesAPI() as api:
        api.add([{"type": "text", "text": "added"}])
        assert _deltas(_parse_sse(_post(api)[2]), "text_delta") == "added"


def test_non_streaming_request_gets_whole_message() -> None:
    with FakeMessagesAPI([[THINKING, TEXT, TOOL]]) as api:
        status, headers, raw = _post(api, _body(stream=False))
    message = json.loads(raw)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert message["id"] == "msg_fake_1"
    assert message["model"] == "claude-test"
    assert message["content"] == [THINKING, TEXT, {**TOOL, "id": "toolu_fake_1"}]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["output_tokens"] > 1


@pytest.mark.parametrize(
    ("fail", "expected_status"),
    [
        ({"mode": "sse_error", "error_type": "overloaded_error", "message": "Busy"}, 529),
        ({"mode": "sse_error", "error_type": "api_error", "message": "Boom"}, 500),
    ],
)
def test_non_streaming_sse_error_becomes_http_error(
    fail: dict[str, Any], expected_status: int
) -> None:
    with FakeMessagesAPI([{"content": [TEXT], "fail": fail}]) as api:
        status, _, raw = _post(api, _body(stream=False))
    assert status == expected_status
    assert json.loads(raw)["error"] == {"type": fail["error_type"], "message": fail["message"]}


@pytest.mark.parametrize("mode", ["disconnect", "truncate"])
def test_non_streaming_broken_answers(mode: str) -> None:
    with (
        FakeMessagesAPI([{"content": [TEXT], "fail": {"mode": mode}}]) as api,
        pytest.raises((OSError, http.client.HTTPException)),
    ):
        _post(api, _body(stream=False))


def test_probe_and_unknown_paths() -> None:
    with FakeMessagesAPI([[TEXT]]) as api:
        conn = _connect(api)
        try:
            conn.request("HEAD", "/")
            head = conn.getresponse()
            head.read()
        finally:
            conn.close()
        status, _, raw = _post(api, path="/v1/other")
        get_conn = _connect(api)
        try:
            get_conn.request("GET", "/nothing")
            missing = get_conn.getresponse()
            missing_body = json.loads(missing.read())
        finally:
            get_conn.close()
        # the unknown path did not use up the scripted reply
        assert _deltas(_parse_sse(_post(api)[2]), "text_delta") == TEXT["text"]
    assert head.status == 200
    assert (status, json.loads(raw)["error"]["type"]) == (404, "not_found_error")
    assert (missing.status, missing_body["error"]["type"]) == (404, "not_found_error")
    assert [r.method for r in api.all_requests] == ["HEAD", "POST", "GET", "POST"]
    assert len(api.requests) == 1


def test_records_requests() -> None:
    with FakeMessagesAPI([[TEXT], [TEXT]]) as api:
        _post(api, path="/v1/messages?beta=true")
        _post(api, _body(stream=False))
        recorded = api.wait_for_requests(2, timeout=5)
    assert [r.path for r in recorded] == ["/v1/messages?beta=true", "/v1/messages"]
    assert [r.stream for r in recorded] == [True, False]
    assert recorded[0].headers["x-api-key"] == "k"
    assert recorded[0].body == _body()
    assert recorded[0].user_texts() == ["hello"]
    assert recorded[0].messages() == [{"role": "user", "content": "hello"}]


def test_wait_helpers_time_out() -> None:
    with FakeMessagesAPI() as api:
        with pytest.raises(TimeoutError):
            api.wait_for_requests(1, timeout=0.05)
        with pytest.raises(TimeoutError):
            api.wait_paused(timeout=0.05)


def test_pause_holds_stream_until_release() -> None:
    text = {"type": "text", "text": "one two three four five"}
    with FakeMessagesAPI([{"content": [text], "pause_after_deltas": 2}]) as api:
        reader = _StreamReader(api)
        reader.start()
        api.wait_paused(timeout=10)
        reader.wait_until(lambda events: _count_deltas(events) == 2)
        assert "message_stop" not in [name for name, _ in reader.events]
        api.release()
        reader.join(timeout=10)
    assert reader.error is None
    assert _deltas(reader.events, "text_delta") == text["text"]
    assert reader.events[-1][0] == "message_stop"


def test_release_only_affects_current_pause() -> None:
    entry: ScriptEntry = {"content": [TEXT], "pause_after_deltas": 1}
    with FakeMessagesAPI([entry, entry]) as api:
        api.release()  # nothing is paused: must not let the next pause through
        reader = _StreamReader(api)
        reader.start()
        api.wait_paused(timeout=10)
        reader.wait_until(lambda events: _count_deltas(events) == 1)
        api.release()
        reader.join(timeout=10)
        second = _StreamReader(api)
        second.start()
        api.wait_paused(timeout=10)
        api.release()
        second.join(timeout=10)
    assert reader.events[-1][0] == second.events[-1][0] == "message_stop"


@pytest.mark.serial
@pytest.mark.parametrize(
    "fail",
    [
        {"mode": "hang", "after_deltas": 1, "seconds": 600},
        {"mode": "disconnect", "after_deltas": 1},
    ],
)
def test_stop_is_quick_while_streams_are_held(fail: dict[str, Any]) -> None:
    script: list[ScriptEntry] = [
        {"content": [TEXT], "fail": fail},
        {"content": [TEXT], "pause_after_deltas": 0},
        {"content": [TEXT], "first_byte_delay_ms": 600_000},
    ]
    api = FakeMessagesAPI(script).start()
    readers = [_StreamReader(api) for _ in script]
    for reader in readers:
        reader.start()
    api.wait_for_requests(3, timeout=10)
    api.wait_paused(timeout=10)
    started = time.monotonic()
    api.stop()
    assert time.monotonic() - started < 2
    for reader in readers:
        reader.join(timeout=10)
        assert not reader.is_alive()


def test_mid_stream_disconnect() -> None:
    fail = {"mode": "disconnect", "after_deltas": 2}
    with FakeMessagesAPI([{"content": [TEXT], "fail": fail}]) as api:
        reader = _StreamReader(api)
        reader.start()
        reader.join(timeout=10)
    assert isinstance(reader.error, (OSError, http.client.HTTPException))
    assert _count_deltas(reader.events) == 2


def test_mid_stream_sse_error() -> None:
    fail = {"mode": "sse_error", "after_deltas": 2, "error_type": "overloaded_error"}
    with FakeMessagesAPI([{"content": [TEXT], "fail": {**fail, "message": "Busy"}}]) as api:
        events = _parse_sse(_post(api)[2])
    assert _count_deltas(events) == 2
    assert events[-1] == (
        "error",
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Busy"},
            "request_id": events[-1][1]["request_id"],
        },
    )


def test_mid_stream_truncate_ends_body_cleanly() -> None:
    with FakeMessagesAPI(
        [{"content": [TEXT], "fail": {"mode": "truncate", "after_deltas": 3}}]
    ) as api:
        status, _, raw = _post(api)
    events = _parse_sse(raw)
    assert status == 200
    assert _count_deltas(events) == 3
    assert events[-1][0] == "content_block_delta"


def test_hang_ends_body_after_its_time() -> None:
    fail = {"mode": "hang", "after_deltas": 1, "seconds": 0.05}
    with FakeMessagesAPI([{"content": [TEXT], "fail": fail}]) as api:
        events = _parse_sse(_post(api)[2])
    assert _count_deltas(events) == 1
    assert "message_stop" not in [name for name, _ in events]


def test_start_twice_and_url_before_start() -> None:
    api = FakeMessagesAPI()
    with pytest.raises(RuntimeError):
        _ = api.base_url
    with api:
        assert api.base_url.startswith("http://127.0.0.1:")
        with pytest.raises(RuntimeError):
            api.start()
    api.stop()  # stopping twice is harmless


# --- the real CLI ---------------------------------------------------------------------


class _Claude:
    """The real CLI in stream-json mode, its stdout lines collected as they arrive."""

    def __init__(self, api: FakeMessagesAPI, tmp_path: Path, prompt: str, *args: str, **env: str):
        home, self.cwd = tmp_path / "home", tmp_path / "work"
        home.mkdir(exist_ok=True)
        self.cwd.mkdir(exist_ok=True)
        argv = [str(require_claude()), "-p", prompt, "--output-format", "stream-json"]
        argv += ["--verbose", "--include-partial-messages", *args]
        self.process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.cwd,
            env=claude_env(api, home, **env),
        )
        self.lines: list[dict[str, Any]] = []
        self.stderr = ""
        self._incoming: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            if raw.strip():
                self._incoming.put(json.loads(raw))
        self._incoming.put(None)

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not any(predicate(line) for line in self.lines):
            line = self._incoming.get(timeout=max(0.0, deadline - time.monotonic()))
            assert line is not None, f"the CLI exited first: {self.lines}"
            self.lines.append(line)

    def finish(self, timeout: float = 60) -> int:
        try:
            code = self.process.wait(timeout)
        finally:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout)
        while (line := self._incoming.get_nowait()) is not None:
            self.lines.append(line)
        assert self.process.stdout is not None and self.process.stderr is not None
        self.stderr = self.process.stderr.read().decode()
        self.process.stdout.close()
        self.process.stderr.close()
        return code

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.lines if line["type"] == kind]

    def result(self) -> dict[str, Any]:
        (result,) = self.of_type("result")
        return result

    def deltas(self, kind: str) -> str:
        return _deltas([("content_block_delta", e) for e in self._block_deltas()], kind)

    def _block_deltas(self) -> list[dict[str, Any]]:
        events = [line["event"] for line in self.of_type("stream_event")]
        return [event for event in events if event["type"] == "content_block_delta"]


def _run_claude(
    api: FakeMessagesAPI, tmp_path: Path, prompt: str, *args: str, **env: str
) -> _Claude:
    claude = _Claude(api, tmp_path, prompt, *args, **env)
    claude.finish()
    return claude


def _is_text_delta(line: dict[str, Any]) -> bool:
    event = line.get("event", {})
    return line["type"] == "stream_event" and bool(
        event.get("delta", {}).get("type") == "text_delta"
    )


@pytest.mark.e2e
def test_cli_plain_text(tmp_path: Path) -> None:
    with FakeMessagesAPI([[TEXT]]) as api:
        claude = _run_claude(api, tmp_path, "hi there")
        (request,) = api.requests
    assert claude.process.returncode == 0, claude.stderr
    assert claude.deltas("text_delta") == TEXT["text"]
    (start,) = [
        e["event"] for e in claude.of_type("stream_event") if e["event"]["type"] == "message_start"
    ]
    assert start["message"]["id"] == "msg_fake_1"
    assert start["message"]["model"] == request.body["model"]
    assert [a["message"]["content"] for a in claude.of_type("assistant")] == [[TEXT]]
    assert claude.result()["is_error"] is False
    assert claude.result()["result"] == TEXT["text"]
    assert request.stream
    assert request.user_texts() == ["hi there"]
    assert request.headers["x-api-key"] == "sk-test"


@pytest.mark.e2e
def test_cli_thinking_then_text(tmp_path: Path) -> None:
    with FakeMessagesAPI([[THINKING, TEXT]]) as api:
        claude = _run_claude(api, tmp_path, "think first")
    assert claude.process.returncode == 0, claude.stderr
    assert claude.deltas("thinking_delta") == THINKING["thinking"]
    assert [a["message"]["content"] for a in claude.of_type("assistant")] == [[THINKING], [TEXT]]
    assert claude.result()["result"] == TEXT["text"]


@pytest.mark.e2e
def test_cli_runs_read_tool_then_answers(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    read = {**TOOL, "input": {"file_path": str(work / "notes.txt")}}
    answer = {"type": "text", "text": "The notes say: remember the milk."}
    with FakeMessagesAPI([[{"type": "text", "text": "Reading."}, read], [answer]]) as api:
        claude = _run_claude(api, tmp_path, "what do my notes say?")
        first, second = api.requests
    assert claude.process.returncode == 0, claude.stderr
    (tool_result,) = claude.of_type("user")[0]["message"]["content"]
    assert tool_result["tool_use_id"] == "toolu_fake_1"
    assert "remember the milk" in tool_result["content"]
    assert claude.result()["num_turns"] == 2
    assert claude.result()["result"] == answer["text"]
    assert len(second.messages()) > len(first.messages())
    sent_back = second.messages()[-1]["content"][0]
    assert (sent_back["type"], sent_back["tool_use_id"]) == ("tool_result", "toolu_fake_1")


@pytest.mark.e2e
def test_cli_gives_up_on_persistent_500(tmp_path: Path) -> None:
    with FakeMessagesAPI([{"status": 500, "times": "always"}]) as api:
        claude = _run_claude(api, tmp_path, "hi there", CLAUDE_CODE_MAX_RETRIES="1")
        posts = api.requests
    assert claude.process.returncode == 1
    assert len(posts) == 2  # the first try and one retry
    (retry,) = [line for line in claude.of_type("system") if line["subtype"] == "api_retry"]
    assert retry["error_status"] == 500
    assert claude.result()["is_error"] is True
    assert claude.result()["api_error_status"] == 500


@pytest.mark.e2e
def test_cli_recovers_from_mid_stream_disconnect(tmp_path: Path) -> None:
    first_try = {"type": "text", "text": "First attempt text that gets cut off here"}
    recovered = {"type": "text", "text": "Second attempt: complete answer."}
    broken: ScriptEntry = {
        "content": [first_try],
        # hold the stream until the CLI has printed the deltas, so the reset cannot drop them
        "pause_after_deltas": 3,
        "fail": {"mode": "disconnect", "after_deltas": 3},
    }
    with FakeMessagesAPI([broken, [recovered]]) as api:
        claude = _Claude(api, tmp_path, "hi there")
        claude.wait_for(lambda line: sum(map(_is_text_delta, claude.lines)) >= 3)
        api.release()
        claude.finish()
        streamed, retried = api.requests
    assert claude.process.returncode == 0, claude.stderr
    # Claude Code 2.1.197 falls back to one non-streaming request; 2.1.330 streams the retry,
    # whose deltas follow the abandoned ones (agentdoc rolls those back on the new message).
    retried_deltas = recovered["text"] if retried.stream else ""
    assert claude.deltas("text_delta") == "First attempt text " + retried_deltas
    starts = [
        e["event"]["message"]["id"]
        for e in claude.of_type("stream_event")
        if e["event"]["type"] == "message_start"
    ]
    assert starts == (["msg_fake_1", "msg_fake_2"] if retried.stream else ["msg_fake_1"])
    (assistant,) = claude.of_type("assistant")
    assert assistant["message"]["id"] == "msg_fake_2"
    assert assistant["message"]["content"] == [recovered]
    assert claude.result()["result"] == recovered["text"]
    assert streamed.stream


@pytest.mark.e2e
def test_cli_waits_at_pause_until_release(tmp_path: Path) -> None:
    text = {"type": "text", "text": "one two three four five six"}
    with FakeMessagesAPI([{"content": [text], "pause_after_deltas": 2}]) as api:
        claude = _Claude(api, tmp_path, "hi there")
        api.wait_paused()
        claude.wait_for(lambda line: sum(map(_is_text_delta, claude.lines)) >= 2)
        assert not claude.of_type("assistant")
        assert not claude.of_type("result")
        api.release()
        claude.finish()
    assert claude.process.returncode == 0, claude.stderr
    assert claude.deltas("text_delta") == text["text"]
    assert claude.result()["result"] == text["text"]


@pytest.mark.e2e
def test_cli_resume_sends_history(tmp_path: Path) -> None:
    first_answer = {"type": "text", "text": "First answer."}
    with FakeMessagesAPI([[first_answer], [TEXT]]) as api:
        first = _run_claude(api, tmp_path, "first question")
        session = first.result()["session_id"]
        second = _run_claude(api, tmp_path, "second question", f"--resume={session}")
        _, resumed = api.requests
    assert second.process.returncode == 0, second.stderr
    assert second.result()["session_id"] == session
    assert resumed.user_texts() == ["first question", "second question"]
    assistant_turns = [m["content"] for m in resumed.messages() if m["role"] == "assistant"]
    assert assistant_turns == [[first_answer]]
