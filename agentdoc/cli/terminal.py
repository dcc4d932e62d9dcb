"""Showing turn progress on the terminal (stderr).

In a terminal, a live display drawn by rich: one line per active document, cut to the
terminal's width so it never wraps (a wrapped line is what made the old hand-drawn display
repeat itself), coloured by state, and with `show_reply` the reply streaming below it. Finished
turns leave one permanent line. Elsewhere (a pipe, a log, systemd's journal, ``TERM=dumb``),
one plain timestamped line per state change. Every failure is printed once, in full, as a line
starting with ``Error:`` (the prefix click gives every other error).

rich is imported only when something is drawn, so that commands which draw nothing start fast.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentdoc.cli.names import document_name
from agentdoc.document import shown_name
from agentdoc.turn import Progress

_log = logging.getLogger("agentdoc.turns")

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.live import Live
    from rich.text import Text

FINAL_STATES = frozenset({"done", "failed", "interrupted", "cancelled"})
STATE_STYLES = {
    "queued": "magenta",
    "starting": "cyan",
    "streaming": "cyan",
    "retrying": "yellow",
    "done": "green",
    "failed": "bold red",
    "interrupted": "yellow",
    "cancelled": "dim",
}


def wants_live(out: TextIO, environ: dict[str, str] | None = None) -> bool:
    """Whether `out` is a terminal that can redraw in place."""
    env = os.environ if environ is None else environ
    return out.isatty() and env.get("TERM", "") != "dumb"


def describe(p: Progress, elapsed: float | None = None, name: str | None = None) -> str:
    """The plain one-line description of a progress report (the failure itself not included)."""
    name = name or shown_name(p.path.name)
    head = f"{name} turn {p.turn}: " if p.turn else f"{name}: "
    parts = [head + p.state, *_figures(p, elapsed)]
    if p.detail and p.state != "failed":
        parts.append(" ".join(p.detail.split()))
    return " · ".join(parts)


def error_line(p: Progress, name: str | None = None) -> str:
    name = name or shown_name(p.path.name)
    if p.turn:
        return f"Error: {name} turn {p.turn}: {p.detail}"
    # A document refused before any turn (its message usually names it already).
    named = name in p.detail.partition(": ")[0]
    return f"Error: {p.detail}" if named else f"Error: {name}: {p.detail}"


def _figures(p: Progress, elapsed: float | None = None) -> list[str]:
    seconds = p.elapsed if elapsed is None else elapsed
    if p.state == "queued" or not p.turn:
        return []
    figures = [f"{seconds:.1f} s"]
    if p.output_chars:
        rate = p.output_chars / 4 / p.elapsed if p.elapsed > 0 else 0.0
        figures.append(f"~{p.output_chars // 4} tokens ({rate:.0f}/s)")
    return figures


@dataclass(frozen=True)
class _Row:
    progress: Progress
    name: str  # the document, as `document_name` shows it
    reported: float  # time.monotonic() of the report, so the clock ticks between reports


class _Display:
    """What the live area shows; replaced whole on each report, read by rich's refresh thread."""

    def __init__(self, rows: tuple[_Row, ...], reply: str) -> None:
        self.rows = rows
        self.reply = reply

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Any]:
        from rich.segment import Segment
        from rich.text import Text

        now = time.monotonic()
        for row in self.rows:
            line = _styled(
                row.progress, row.name, row.progress.elapsed + now - row.reported, options.max_width
            )
            line.no_wrap, line.overflow = True, "ellipsis"
            yield line
        if self.reply:
            # Only the reply's last lines fit under the progress lines; it is printed whole
            # when the turn ends.
            room = max(options.height - len(self.rows) - 1, 1) if options.height else 20
            lines = console.render_lines(Text(self.reply), options.update(height=None), pad=False)
            for segments in lines[-room:]:
                yield from segments
                yield Segment.line()


def _styled(p: Progress, name: str, elapsed: float | None = None, width: int | None = None) -> Text:
    """The progress line; given a `width`, a long name is shortened so the state still shows
    (its start goes: the file name at its end is what tells it apart)."""
    from rich.text import Text

    if width is not None:
        rest = len(describe(p, elapsed, name)) - len(name)
        room = max(width - rest, 12)
        if len(name) > room:
            name = "…" + name[len(name) - room + 1 :]
    text = Text()
    text.append(name, style="bold")
    text.append(f" turn {p.turn}: " if p.turn else ": ")
    text.append(p.state, style=STATE_STYLES.get(p.state, ""))
    for figure in _figures(p, elapsed):
        text.append(f" · {figure}")
    if p.detail and p.state != "failed":
        text.append(" · " + " ".join(p.detail.split()), style="dim")
    return text


class LiveView:
    """A progress callback, safe to call from several turn threads at once.

    `quiet` prints failures only. `show_reply` streams the reply under the progress line (live
    display only) and prints it whole to `reply_out` when the turn ends. Documents are named by
    their path under the one of `roots` that holds them (default: the current folder).
    `log_states` also logs each state change (INFO), for the daemon's log file.
    """

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        live: bool | None = None,
        quiet: bool = False,
        show_reply: bool = False,
        reply_out: TextIO | None = None,
        roots: Sequence[Path] | None = None,
        log_states: bool = False,
    ) -> None:
        self.out = out or sys.stderr
        self.roots = tuple(roots) if roots is not None else (Path.cwd(),)
        self.log_states = log_states
        self.live = wants_live(self.out) if live is None else live
        self.quiet = quiet
        self.show_reply = show_reply and self.live and not quiet
        self.reply_out = reply_out or sys.stdout
        self._active: dict[Path, _Row] = {}
        self._states: dict[Path, str] = {}
        self._names: dict[Path, str] = {}
        self._reply = ""
        self._lock = threading.Lock()
        self._console: Console | None = None
        self._live: Live | None = None

    def __call__(self, p: Progress) -> None:
        with self._lock:
            changed = self._states.get(p.path) != p.state
            final = p.state in FINAL_STATES
            if final:
                self._active.pop(p.path, None)
                self._states.pop(p.path, None)
            else:
                self._states[p.path] = p.state
                self._active[p.path] = _Row(p, self._name(p), time.monotonic())
            if self.show_reply and p.reply is not None:
                from agentdoc.document import render_body

                self._reply = render_body(p.reply, final=final)
            if self.live and not self.quiet:
                self._draw(p, final=final)
            elif changed and not self.quiet:
                self.out.write(f"{time.strftime('%H:%M:%S')} {describe(p, name=self._name(p))}\n")
            if changed and self.log_states:
                # For the log file: the terminal shows these lines already (`told`).
                _log.info("%s", describe(p, name=self._name(p)), extra={"told": True})
            if p.state == "failed" and p.detail:
                self._print_error(p)
            self.out.flush()

    def _name(self, p: Progress) -> str:
        # Reports come many times a second while a reply streams: one look at the disk each.
        if p.path not in self._names:
            self._names[p.path] = document_name(p.path, self.roots)
        return self._names[p.path]

    def close(self) -> None:
        """Take the live display down (a turn that ended without a final report leaves one)."""
        with self._lock:
            self._active.clear()
            self._stop()

    def _draw(self, p: Progress, *, final: bool) -> None:
        if final:
            self._stop(finished=p)
        elif self._active:
            display = _Display(tuple(self._active.values()), self._reply)
            if self._live is None:
                from rich.live import Live

                self._live = Live(
                    display,
                    console=self._get_console(),
                    refresh_per_second=8,
                    transient=True,
                    redirect_stdout=False,
                    redirect_stderr=False,
                )
                self._live.start()
            else:
                self._live.update(display)

    def _stop(self, finished: Progress | None = None) -> None:
        """Print the finished turn's line above the live area; end the area if none is left."""
        if self._live is not None and not self._active:
            self._live.stop()
            self._live = None
        if finished is not None and self.show_reply and self._reply:
            self.reply_out.write(self._reply.rstrip("\n") + "\n")
            self.reply_out.flush()
            self._reply = ""
        if finished is not None:
            self._get_console().print(_styled(finished, self._name(finished)))
        if self._live is not None:
            self._live.update(_Display(tuple(self._active.values()), self._reply))

    def _print_error(self, p: Progress) -> None:
        if self.live:
            from rich.text import Text

            line = Text("Error:", style="bold red")
            line.append(error_line(p, self._name(p)).removeprefix("Error:"))
            self._get_console().print(line, soft_wrap=True)
        else:
            self.out.write(error_line(p, self._name(p)) + "\n")

    def _get_console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(
                file=self.out,
                force_terminal=self.live,
                no_color=bool(os.environ.get("NO_COLOR")),
                highlight=False,
            )
        return self._console
