"""`notify = [COMMAND, ARG, …]`: tell someone away from the screen that a reply needs them.

The command comes only from the user's config (a document never names one). It runs on its own
thread, one at a time, each bounded by a timeout, so a slow or hanging command never holds up a
turn; what it is told travels in its environment, never in its arguments, so no reply text can
become an option of the command.
"""

from __future__ import annotations

import logging
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.turn import Progress

log = logging.getLogger(__name__)

NOTIFY_TIMEOUT = 30.0  # seconds one run of the command may take
BACKLOG = 32  # events waiting to be told, at most; more are dropped (and logged)
SUMMARY_CHARS = 160

# Progress states that are worth a notification, and the event each one is.
EVENTS = {"done": "done", "failed": "failed", "waiting": "waiting", "held": "held"}


def one_line(text: str) -> str:
    """The first line with words in it, shortened to fit a notification."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def summary(p: Progress) -> str:
    if p.state == "done":
        return one_line(p.reply.text() if p.reply is not None else "") or "the reply is done"
    if p.state == "waiting":
        return one_line(f"a tool waits for approval: {p.detail}")
    return one_line(p.detail)


def environment(event: str, path: Path, turn: int, text: str) -> dict[str, str]:
    return {
        "AGENTDOC_EVENT": event,
        "AGENTDOC_DOCUMENT": str(path),
        "AGENTDOC_TURN": str(turn),
        "AGENTDOC_SUMMARY": text,
    }


@dataclass
class Notifier:
    command: tuple[str, ...]
    environ: Mapping[str, str] | None = None
    timeout: float = NOTIFY_TIMEOUT
    _queue: queue.Queue[dict[str, str] | None] = field(
        default_factory=lambda: queue.Queue(BACKLOG), init=False
    )
    _last: dict[Path, str] = field(default_factory=dict, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def wrap(self, report: Callable[[Progress], None]) -> Callable[[Progress], None]:
        """`report`, and then this notifier told the same progress."""

        def told(p: Progress) -> None:
            report(p)
            self.observe(p)

        return told

    def observe(self, p: Progress) -> None:
        """Notify once per event a turn's progress reports (a waiting turn reports often)."""
        before = self._last.get(p.path)
        self._last[p.path] = p.state
        event = EVENTS.get(p.state)
        if event is None or before == p.state:
            return  # the same wait, or a failure told a second time by the daemon
        self.tell(event, p.path, p.turn, summary(p))

    def tell(self, event: str, path: Path, turn: int, text: str) -> None:
        if not self.command:
            return
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="notify", daemon=True)
            self._thread.start()
        try:
            self._queue.put_nowait(environment(event, path, turn, text))
        except queue.Full:
            log.warning(
                "notify: %d notifications still waiting; %s for %s dropped", BACKLOG, event, path
            )

    def close(self, grace: float = 5.0) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(grace)

    def _work(self) -> None:
        while (env := self._queue.get()) is not None:
            self._run(env)

    def _run(self, extra: dict[str, str]) -> None:
        base = dict(os.environ if self.environ is None else self.environ)
        try:
            done = subprocess.run(
                list(self.command),
                env=base | extra,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            log.warning(
                "notify: %s took over %.0f s and was stopped", self.command[0], self.timeout
            )
        except OSError as exc:
            log.warning("notify: cannot run %s (the `notify` setting): %s", self.command[0], exc)
        else:
            if done.returncode != 0:
                tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
                log.warning("notify: %s exited %d: %s", self.command[0], done.returncode, tail)
