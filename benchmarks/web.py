"""The web page of `agentdoc watch --serve`: how soon a streamed write reaches an open page,
and what an open page costs the daemon per streamed delta. The real Claude CLI against the
offline API, as in `daemon.py`.

* `w/latency`: a warm turn of DELTAS deltas into a 10 KiB document with one page's event
  stream open. For each version of the file (seen by a stat every millisecond, so up to 1 ms
  late), the time until the stream carried a view holding its last word. Target ≤ 100 ms.
* `w/delta/page` vs `w/delta/none`: the daemon process's CPU per delta over such a turn, with
  the page's stream open and with no page, measured alternately on one daemon. Target: the
  open page within 1.2× of none.
"""

from __future__ import annotations

import http.client
import re
import socket
import statistics
import threading
import time
from pathlib import Path

from daemon import DELTAS, LONG_REPLY, Watch, _env, history, turn
from measure import CheckFailed, Row
from warm import find_claude

from agentdoc.agents.fakeapi import FakeMessagesAPI

WORD = re.compile(rb"\bw(\d+)\b")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _last_word(data: bytes) -> int:
    found = WORD.findall(data[-4000:])
    return int(found[-1]) if found else -1


class Page:
    """One open page's event stream: the time each view arrived, with its last word."""

    def __init__(self, port: int, rel: str) -> None:
        self.views: list[tuple[float, int]] = []
        self._conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self._conn.request("GET", f"/events/0/{rel}")
        self._answer = self._conn.getresponse()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while line := self._answer.readline():
                if line.startswith(b"data: "):
                    self.views.append((time.perf_counter(), _last_word(line)))
        except (OSError, ValueError, AttributeError):
            pass  # closed under the reader: the measurement is over

    def close(self) -> None:
        self._conn.close()
        self._thread.join(5)


class Versions:
    """Each version of the file, seen by a stat every millisecond: its time and last word."""

    def __init__(self, path: Path) -> None:
        self.seen: list[tuple[float, int]] = []
        self._path = path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        last = None
        while not self._stop.wait(0.001):
            try:
                st = self._path.stat()
            except OSError:
                continue
            if (st.st_mtime_ns, st.st_size, st.st_ino) != last:
                last = (st.st_mtime_ns, st.st_size, st.st_ino)
                self.seen.append((time.perf_counter(), _last_word(self._path.read_bytes())))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)


def _latencies(versions: list[tuple[float, int]], views: list[tuple[float, int]]) -> list[float]:
    out = []
    for when, word in versions:
        if word < 0:
            continue
        arrived = next((t for t, w in views if w >= word and t >= when - 0.001), None)
        if arrived is not None:
            out.append(max(0.0, arrived - when))
    return out


def bench_web(folder: Path, reps: int, check: bool) -> list[Row]:
    claude = find_claude()
    if claude is None:
        raise CheckFailed("the Claude CLI is not installed (npm ci)")
    folder.mkdir(exist_ok=True)
    port = _port()
    latency: list[float] = []
    cpu: dict[str, list[float]] = {"page": [], "none": []}
    with FakeMessagesAPI(default=LONG_REPLY, delta_delay=0.001) as api:
        watch = Watch(folder, _env(api, folder, str(claude)), "--serve", f"127.0.0.1:{port}")
        docs = watch.docs.resolve()
        try:
            for rep in range(reps):
                doc = docs / f"page-{rep}.md"
                doc.write_text(history(10 * 1024), encoding="utf-8")
                time.sleep(0.4)
                turn(api, doc, "first")  # starts the CLI
                for label in ("page", "none") if rep % 2 == 0 else ("none", "page"):
                    page = Page(port, doc.name) if label == "page" else None
                    versions = Versions(doc) if label == "page" else None
                    before = watch.cpu()
                    turn(api, doc, f"{label} {rep}")
                    cpu[label].append((watch.cpu() - before) / DELTAS)
                    if page is not None and versions is not None:
                        versions.close()
                        page.close()
                        latency += _latencies(versions.seen, page.views)
                if check and doc.read_text(encoding="utf-8").count(f"w{DELTAS - 1}") < 3:
                    raise CheckFailed("w/delta: the long reply is not in the document")
        finally:
            watch.close()
    if check and not latency:
        raise CheckFailed("w/latency: the page saw no streamed write")
    ratio = statistics.median(cpu["page"]) / statistics.median(cpu["none"])
    p95 = sorted(latency)[int(0.95 * (len(latency) - 1))] if latency else float("nan")
    return [
        Row(
            "w/latency",
            "a streamed write → the open page's stream",
            tuple(latency),
            note=f"{len(latency)} writes, p95 {p95 * 1000:.1f} ms",
        ),
        Row(
            "w/delta/page",
            f"watch process CPU per delta, one page open, {DELTAS} deltas",
            tuple(cpu["page"]),
            baseline="w/delta/none",
            note=f"{ratio:.2f}× of none",
        ),
        Row("w/delta/none", "the same with no page open", tuple(cpu["none"])),
    ]
