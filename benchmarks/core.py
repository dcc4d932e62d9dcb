"""In-process benchmarks: stream parsing, one streamed flush, and parsing a whole document.

Each measures agentdoc's real code against the cheapest thing that does the same amount of raw
work (decode the JSON, write the bytes, tokenize the markdown), so the ratio says how much
agentdoc adds on top of work it cannot avoid.
"""

from __future__ import annotations

import json
import os
import statistics
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from measure import CheckFailed, Row, alternate

from agentdoc.agents import ReplyBuilder
from agentdoc.agents.acp.rpc import Connection
from agentdoc.agents.acp.translate import UpdateTranslator
from agentdoc.agents.claude.events import Result
from agentdoc.agents.claude.stream import convert, load_line, parse_line, streamed_text
from agentdoc.agents.claude.translate import Translator
from agentdoc.config import Settings
from agentdoc.daemon import own_command
from agentdoc.document import parser as document
from agentdoc.document import splice
from agentdoc.document.ledger import WriteLedger
from agentdoc.turn.runner import TurnRunner

REPO = Path(__file__).resolve().parent.parent
TRANSCRIPTS = REPO / "tests" / "fixtures" / "transcripts"

FRONTMATTER = "---\ntitle: Benchmark\nagentdoc: {}\n---\n\n# Benchmark\n\n"
FLUSH_SIZES = ((10 * 1024, "10K"), (100 * 1024, "100K"), (1024 * 1024, "1M"))
REGION_BYTES = 2 * 1024
EXCHANGES = 100

_SENTENCE = "The quick brown fox jumps over the lazy dog, and the `dog` does not mind. "


# --- documents (pure) -----------------------------------------------------------------------


def exchange(index: int) -> str:
    """One `## User` / `## Assistant` pair of about 2 KB, with the usual markdown in it."""
    prompt = f"Question {index}: how does *this* part work? " + _SENTENCE * 3
    reply = "\n\n".join(
        [
            _SENTENCE * 5,
            "- first point\n- second point with **bold** text\n- third point",
            f"```python\ndef answer_{index}() -> int:\n    return {index}\n```",
            _SENTENCE * 8,
            "> a quoted line\n> and another",
            _SENTENCE * 7,
            f"<sub>claude-sonnet · 1.2k in / 0.4k out · {index % 10}.0 s</sub>",
        ]
    )
    return f"## User\n\n{prompt}\n\n## Assistant\n\n{reply}\n\n"


def conversation(exchanges: int) -> str:
    return FRONTMATTER + "".join(exchange(i) for i in range(exchanges))


def filler(size: int) -> str:
    """A paragraph of `size` characters (none if `size` is not positive)."""
    if size <= 2:
        return ""
    return (_SENTENCE * (size // len(_SENTENCE) + 1))[: size - 2].rstrip() + "\n\n"


def streaming_document(size: int, nonce: str) -> str:
    """A document that is about `size` bytes once its streaming region holds 2 KB of reply."""
    text = FRONTMATTER
    index = 0
    while len(text) + len(exchange(index)) + REGION_BYTES < size:
        text += exchange(index)
        index += 1
    prompt = "## User\n\nPlease write a long answer.\n"
    # The end marker gains a version once the region is filled (about 9 characters).
    short = size - REGION_BYTES - len(splice.open_reply(text + prompt, len(text + prompt), nonce))
    head = text + filler(short - 9) + prompt
    return splice.open_reply(head, len(head), nonce)


def reply_body(index: int) -> str:
    """A 2 KB reply body that differs at its end on every call, as a growing reply does."""
    base = (_SENTENCE * (REGION_BYTES // len(_SENTENCE) + 1))[: REGION_BYTES - 16]
    return f"{base} w{index}"


# --- 1. parse -------------------------------------------------------------------------------


def _feed_all(lines: list[bytes]) -> ReplyBuilder:
    """The lines as a Claude turn reads them: text deltas on the fast path, the rest typed."""
    builder = ReplyBuilder()
    translator = Translator()
    for line in lines:
        raw = load_line(line)
        if raw is None:
            continue
        if (delta := streamed_text(raw)) is not None:
            out = translator.text_delta(*delta)
        else:
            event = convert(raw)
            out = translator.feed(event) if event is not None else []
        for neutral in out:
            builder.feed(neutral)
    return builder


def _load_all(lines: list[bytes]) -> None:
    for line in lines:
        json.loads(line)


def bench_parse(reps: int, check: bool) -> list[Row]:
    lines = (TRANSCRIPTS / "long_stream.ndjson").read_bytes().splitlines()
    count = len(lines)
    acp = acp_lines(lines)
    ours, base, theirs = alternate(
        [lambda: _feed_all(lines), lambda: _load_all(lines), lambda: _feed_acp(acp)], reps
    )
    if check:
        _check_parse(lines)
        if _feed_acp(acp).reply.text() != _feed_all(lines).reply.text():
            raise CheckFailed("parse/acp: the reply differs from the Claude recording's")
    per_line = tuple(t / count for t in ours)
    per_load = tuple(t / count for t in base)
    return [
        Row(
            "parse",
            "parse_line + Translator + ReplyBuilder.feed, per stdout line",
            per_line,
            baseline="parse/json",
            note=f"{count / statistics.median(ours):,.0f} events/s ({count} lines)",
        ),
        Row(
            "parse/json",
            "json.loads of the same lines, per line",
            per_load,
            note=f"{count / statistics.median(base):,.0f} lines/s",
        ),
        Row(
            "parse/acp",
            "ACP: JSON-RPC line → UpdateTranslator → ReplyBuilder, per chunk",
            tuple(t / len(acp) for t in theirs),
            baseline="parse/json",
            note=f"{len(acp) / statistics.median(theirs):,.0f} chunks/s ({len(acp)} lines)",
        ),
    ]


def acp_lines(lines: list[bytes]) -> list[bytes]:
    """The reply of a Claude recording as an ACP agent streams it: one ``session/update``
    notification per text delta, as JSON-RPC lines."""
    texts = [d[2] for line in lines if (r := load_line(line)) and (d := streamed_text(r))]
    return [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": "bench",
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": text},
                    },
                },
            }
        ).encode()
        for text in texts
    ]


def _feed_acp(lines: list[bytes]) -> ReplyBuilder:
    """The ACP client's reading path, from a line off the agent's stdout to the reply."""
    builder = ReplyBuilder()
    translator = UpdateTranslator()

    def notified(method: str, params: dict[str, Any]) -> None:
        for event in translator.update(params["update"]):
            builder.feed(event)

    connection = Connection(["agent"], Path("."), {}, lambda *_: None, notified, clearance=None)
    for line in lines:
        connection._dispatch(line)  # the private method is the point: every line goes there
    return builder


def _check_parse(lines: list[bytes]) -> None:
    builder = _feed_all(lines)
    builder.finish()
    reply = builder.reply
    results = [e for e in map(parse_line, lines) if isinstance(e, Result)]
    if reply.stop_reason is None or [reply.text()] != [r.result for r in results]:
        raise CheckFailed("parse: the reply built from long_stream differs from its result line")


# --- 2. flush -------------------------------------------------------------------------------


class _Flusher:
    """One turn's streamed flush on a prepared document, through TurnRunner's own write path."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.count = 0
        settings = Settings()
        self.runner = TurnRunner(
            path, settings, clear=own_command(path, settings), ledger=WriteLedger()
        )
        path.write_text(streaming_document(size, self.runner._writer.nonce), encoding="utf-8")
        self.flush()  # the first flush fills the empty region; later ones replace a 2 KB body

    def flush(self) -> None:
        self.count += 1
        # The private method is the point: it is the exact path every streamed write takes.
        self.runner._writer.flush(reply_body(self.count))


def _write(path: Path, data: bytes) -> Callable[[], None]:
    def write() -> None:
        path.write_bytes(data)

    return write


def _write_fsync(path: Path, data: bytes) -> Callable[[], None]:
    def write() -> None:
        with path.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    return write


def bench_flush(folder: Path, reps: int, check: bool) -> list[Row]:
    rows: list[Row] = []
    for size, label in FLUSH_SIZES:
        flusher = _Flusher(folder / f"flush-{label}.md", size)
        data = flusher.path.read_bytes()
        ours, synced, plain = alternate(
            [
                flusher.flush,
                _write_fsync(folder / f"fsync-{label}.bin", data),
                _write(folder / f"write-{label}.bin", data),
            ],
            reps,
            # Streamed flushes are a flush_interval apart, so each finds the filesystem's
            # journal at rest; without this, each write would pay for the previous one's commit.
            between=os.sync,
        )
        if check:
            _check_flush(flusher)
        size_note = f"document {len(data) / 1024:,.1f} KiB"
        rows += [
            Row(
                f"flush/{label}",
                "fill_region + atomic write, 2 KiB reply region",
                tuple(ours),
                baseline=f"write+fsync/{label}",
                note=size_note,
            ),
            Row(
                f"write+fsync/{label}",
                "open, write, fsync of the same bytes",
                tuple(synced),
                baseline=f"write/{label}",
            ),
            Row(f"write/{label}", "Path.write_bytes of the same bytes", tuple(plain)),
        ]
    return rows


def _check_flush(flusher: _Flusher) -> None:
    text = flusher.path.read_text(encoding="utf-8")
    if reply_body(flusher.count) not in text or len(document.parse(text).turns) < 2:
        raise CheckFailed(f"flush: {flusher.path.name} does not hold the last flushed body")


def bench_flush_memory(folder: Path, reps: int, check: bool) -> list[Row]:
    # The 1 MB row is the target; the 10 KB one shows what a flush costs whatever the size.
    rows: list[Row] = []
    for size, label in (FLUSH_SIZES[0], FLUSH_SIZES[-1]):
        flusher = _Flusher(folder / f"memory-{label}.md", size)
        peaks = _flush_peaks(flusher, reps)
        if check:
            _check_flush(flusher)
        rows += [
            Row(
                f"flush-mem/{label}",
                "tracemalloc peak of one flush",
                tuple(peaks),
                unit="B",
                baseline=f"doc-size/{label}",
                note="peak above what was allocated before",
            ),
            Row(
                f"doc-size/{label}",
                "the document's size on disk",
                (float(flusher.path.stat().st_size),),
                unit="B",
                note="a constant, not measured",
            ),
        ]
    return rows


def _flush_peaks(flusher: _Flusher, reps: int) -> list[float]:
    tracemalloc.start()
    try:
        flusher.flush()  # warm-up: first-call allocations (regex caches) are not per flush
        return [_peak_of(flusher.flush) for _ in range(reps)]
    finally:
        tracemalloc.stop()


def _peak_of(action: Callable[[], object]) -> float:
    before, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    action()
    _, peak = tracemalloc.get_traced_memory()
    return float(peak - before)


# --- 3. parse document ----------------------------------------------------------------------


def bench_document(reps: int, check: bool) -> list[Row]:
    text = conversation(EXCHANGES)
    commonmark = MarkdownIt("commonmark")
    ours, base = alternate([lambda: document.parse(text), lambda: commonmark.parse(text)], reps)
    if check and len(document.parse(text).turns) != 2 * EXCHANGES:
        raise CheckFailed(f"document: expected {2 * EXCHANGES} turns in the generated document")
    return [
        Row(
            "document",
            f"agentdoc.document.parse, {EXCHANGES} exchanges",
            tuple(ours),
            baseline="document/md-it",
            note=f"document {len(text.encode()) / 1024:,.1f} KiB",
        ),
        Row("document/md-it", 'MarkdownIt("commonmark").parse of the same text', tuple(base)),
    ]
