"""`agentdoc run` in a terminal: a tool that waits for permission is asked about right there.

A one-shot CLI has no way to ask (it refuses such a tool), so when stdin is a terminal `run`
drives the CLI the way the daemon does (permission requests over stdio) for its one turn. The
request still shows in the document as an approval block, and a ticked box or `agentdoc approve`
still answers it; the terminal is one more place to answer, through the same answer file. The
question is read on a thread that gives up once the request is answered elsewhere.
"""

from __future__ import annotations

import select
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from agentdoc.agents import Reply, ToolPart
from agentdoc.document import Behavior, refused_unasked, summarize_input
from agentdoc.errors import AgentdocError
from agentdoc.turn import Progress, request_answer

PROMPT = "  [y] allow once · [a] allow for this session · [n] deny (n REASON tells Claude why): "
_CHOICES: dict[str, Behavior] = {
    "y": "allow",
    "yes": "allow",
    "a": "always",
    "always": "always",
    "n": "deny",
    "no": "deny",
    "d": "deny",
    "deny": "deny",
}


def parse_choice(line: str) -> tuple[Behavior, str] | None:
    """The person's answer: a behaviour and, for a denial, the reason after the letter."""
    word, _, rest = line.strip().partition(" ")
    behavior = _CHOICES.get(word.lower())
    if behavior is None:
        return None
    return behavior, rest.strip() if behavior == "deny" else ""


def waiting_tool(reply: Reply | None, name: str) -> str:
    """The waiting tool and what it would do, e.g. `Write: notes/out.txt`."""
    parts = reply.parts if reply is not None else ()
    for part in reversed(parts):
        if isinstance(part, ToolPart) and part.name == name and part.result is None:
            return f"{name}: {summarize_input(name, part.input)}"
    return name


def refusals(reply: Reply) -> list[str]:
    """Tools the CLI refused without asking anyone."""
    return [p.name for p in reply.parts if isinstance(p, ToolPart) and refused_unasked(p)]


class TerminalAsker:
    """A progress callback in front of the view: asks while a request waits, else passes on."""

    def __init__(
        self,
        path: Path,
        view: Callable[[Progress], None],
        close_view: Callable[[], None],
        stdin: TextIO | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.path = path
        self.view = view
        self.close_view = close_view
        self.stdin = stdin or sys.stdin
        self.out = out or sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, p: Progress) -> None:
        if p.state == "waiting" and p.detail:
            if self._thread is None:
                self.close_view()  # the live display would draw over the question
                self._stop.clear()
                question = waiting_tool(p.reply, p.detail)
                self._thread = threading.Thread(target=self._ask, args=(question,), daemon=True)
                self._thread.start()
            return
        self.done()
        self.view(p)

    def done(self) -> None:
        """The request was answered (here or elsewhere) or the turn ended: stop asking."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join(2.0)
            self._thread = None

    def _ask(self, question: str) -> None:
        self.out.write(
            f"\n{question}\n  waits for your permission (also asked in {self.path.name})\n"
        )
        self.out.write(PROMPT)
        self.out.flush()
        while True:
            if self._stop.is_set():
                self.out.write("(no longer asked: answered elsewhere, or the turn ended)\n")
                self.out.flush()
                return
            ready, _, _ = select.select([self.stdin], [], [], 0.2)
            if not ready:
                continue
            line = self.stdin.readline()
            if not line:
                return  # end of input: leave the answer to the document or the timeout
            choice = parse_choice(line)
            if choice is None:
                self.out.write(PROMPT)
                self.out.flush()
                continue
            self._answer(*choice)
            return

    def _answer(self, behavior: Behavior, message: str) -> None:
        try:
            request_answer(self.path, behavior, message)
        except AgentdocError as exc:
            self.out.write(f"not passed on: {exc}\n")
        else:
            self.out.write(f"{behavior}\n")
        self.out.flush()
