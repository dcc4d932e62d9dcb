"""How far one save travels through agentdoc: the functions and modules a prompt's save passes
through on the daemon's threads, and how often the document is parsed and its prompt detected.

An in-process daemon with the replaying fake `claude` (see live.py) watches a folder with one
session document; a prompt is saved into it. A profiler on every thread the daemon starts
(`threading.setprofile`) records each call of an agentdoc function, from the watchdog event
for that save (`_EventHandler.dispatch` with the document's path) until

* `footer`: the reply's final form, footer included, is written (`ReplyWriter.close` returns);
* `turn`: the daemon has taken the turn's end in and had its look at the document after it
  (`Saves.recheck` returns): the whole turn as the daemon lives it.

Counted: distinct agentdoc functions ("hops") and modules, `document.parse` of this document
(`parser._parse`, with who asked), and the detection of its pending prompt
(`Document.pending_prompt` on the version holding the saved prompt, before the reply).
Counts, not times: the profiler slows everything down, and the figures do not depend on it.

    .venv/bin/python benchmarks/hops.py      # the table, and who parsed the document
    .venv/bin/python benchmarks/hops.py -v   # and the hops themselves
"""

from __future__ import annotations

import importlib
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from live import DOC, PROMPT, TIMEOUT, install_fake, running
from measure import CheckFailed, wait_until

from agentdoc.daemon.service import Daemon

# The steps of a save, each on the thread that takes it: the kernel's event (watchdog's thread),
# settled (the watcher's), decided (the loop), the agent started and the reply opened (the
# turn's thread), the reply's final form written. The functions on the stack at each, together,
# are the save's path: its "hops".
STEP_FUNCTIONS = {
    "agentdoc.daemon.watch.fsevents": "EventHandler.dispatch",
    "agentdoc.daemon.watch.settle": "Settler.touch",
    "agentdoc.daemon.watch.watcher": "Watcher._remember",
    "agentdoc.daemon.classify": "classify",
    "agentdoc.agents.base.child": "spawn",
    "agentdoc.turn.writer": "ReplyWriter.open",
    "agentdoc.document.fileio": "atomic_write",
}
STEPS = frozenset(STEP_FUNCTIONS.values())
DISPATCH = STEP_FUNCTIONS["agentdoc.daemon.watch.fsevents"]
# Where the windows close: the reply's final write, and the daemon's look after the turn.
ENDS = {"footer": ("agentdoc.turn.writer", "ReplyWriter.close"),
        "turn": ("agentdoc.daemon.saves", "Saves.recheck")}  # fmt: skip


def check_names() -> None:
    """Every function this script waits for still exists: a rename fails here, by name, not
    as a turn that never seems to start."""
    named = [*STEP_FUNCTIONS.items(), *ENDS.values()]
    for module, qualname in named:
        found: object = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is None:
            raise CheckFailed(f"hops: {module}.{qualname} is gone; update benchmarks/hops.py")


@dataclass
class Window:
    """What one stretch of the run called: (module, function) pairs, parses, prompt looks."""

    functions: set[tuple[str, str]] = field(default_factory=set)
    path: set[tuple[str, str]] = field(default_factory=set)  # on the stack at a step of the save
    parses: Counter[str] = field(default_factory=Counter)  # by who called parse
    prompt_looks: int = 0

    def row(self, name: str) -> str:
        modules = {module for module, _ in self.functions}
        path_modules = {module for module, _ in self.path}
        parses = sum(self.parses.values())
        return (
            f"{name:<8} {len(self.path):>5} {len(path_modules):>6} {len(self.functions):>9}"
            f" {len(modules):>8} {parses:>8} {self.prompt_looks:>8}"
        )


@dataclass
class Tracer:
    """The profile function for every daemon thread; records between `start` and `stop`."""

    doc: Path
    windows: dict[str, Window] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("agentdoc"):
            return
        code = frame.f_code
        if event == "call":
            self._called(frame, module, code.co_qualname)
        elif event == "return":
            self._returned(module, code.co_qualname)

    def _called(self, frame: FrameType, module: str, name: str) -> None:
        if name == DISPATCH and not self.windows and self._about_doc(frame):
            with self.lock:
                self.windows = {"footer": Window(), "turn": Window()}
                self.open = {"footer", "turn"}
        if not self.open:
            return
        step = name in STEPS and (name != "atomic_write" or _within(frame, "ReplyWriter.close"))
        with self.lock:
            for window in (self.windows[w] for w in self.open):
                window.functions.add((module, name))
                if step:
                    window.path.update(_stack(frame))
                if module == "agentdoc.document.parser" and name == "_parse":
                    if PROMPT in (text := frame.f_locals.get("text", "")):
                        version = "the reply" if "## Assistant" in text else "the prompt"
                        window.parses[f"{_asker(frame)} ({version})"] += 1
                elif name == "Document.pending_prompt" and self._prompt_version(frame):
                    window.prompt_looks += 1

    def _returned(self, module: str, name: str) -> None:
        for window, end in ENDS.items():
            if (module, name) == end:
                self.open.discard(window)

    def _about_doc(self, frame: FrameType) -> bool:
        event = frame.f_locals.get("event")
        paths = (getattr(event, "src_path", ""), getattr(event, "dest_path", ""))
        return str(self.doc) in (str(p) for p in paths)

    @staticmethod
    def _prompt_version(frame: FrameType) -> bool:
        text = getattr(frame.f_locals.get("self"), "text", "")
        return PROMPT in text and "## Assistant" not in text


def _stack(frame: FrameType | None) -> list[tuple[str, str]]:
    """The agentdoc functions on the stack, `frame`'s own included."""
    found = []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("agentdoc"):
            found.append((module, frame.f_code.co_qualname))
        frame = frame.f_back
    return found


def _within(frame: FrameType, name: str) -> bool:
    return any(qualname == name for _module, qualname in _stack(frame))


def _asker(frame: FrameType) -> str:
    """Who parsed: the first caller outside the parser module."""
    caller = frame.f_back
    while caller is not None and caller.f_globals.get("__name__") == "agentdoc.document.parser":
        caller = caller.f_back
    if caller is None:
        return "?"
    return f"{caller.f_globals.get('__name__', '?')}.{caller.f_code.co_qualname}"


def measure(folder: Path) -> Tracer:
    check_names()
    fake = install_fake(folder / "fake")
    docs = folder / "docs"
    docs.mkdir()
    doc = (docs / "chat.md").resolve()
    doc.write_text(DOC, encoding="utf-8")
    daemon = Daemon([docs], fake.settings(settle_step=0.1, settle_max=1.0), environ=fake.env)
    tracer = Tracer(doc)
    threading.setprofile(tracer)  # every thread the daemon starts from here on
    try:
        with running(daemon):
            if not daemon.discovered.wait(TIMEOUT):
                raise CheckFailed("hops: the daemon's start-up walk did not end")
            doc.write_text(DOC + PROMPT + "\n", encoding="utf-8")
            wait_until(lambda: not tracer.open and bool(tracer.windows), TIMEOUT, 0.01, "the turn")
    finally:
        threading.setprofile(None)
    if "## Assistant" not in doc.read_text(encoding="utf-8"):
        raise CheckFailed("hops: the prompt was not answered")
    return tracer


def report(tracer: Tracer, verbose: bool) -> None:
    columns = ("hops", "(mods)", "functions", "modules", "parses", "prompts")
    print(
        f"{'window':<8} {columns[0]:>5} {columns[1]:>6} "
        + " ".join(f"{c:>9}" if c == "functions" else f"{c:>8}" for c in columns[2:])
    )
    for name, window in tracer.windows.items():
        print(window.row(name))
    print(
        "\nhops: functions on the stack at a step of the save (event, settled, decided, agent\n"
        "started, reply opened, final write); functions: every agentdoc function called on\n"
        "any thread meanwhile (rescans and the search index included)."
    )
    print("\nparses of the document over the turn, by who asked:")
    for asker, count in tracer.windows["turn"].parses.most_common():
        print(f"  {count}  {asker}")
    if verbose:
        print("\nthe hops, as first met:")
        for module, name in sorted(tracer.windows["footer"].path):
            print(f"  {module}.{name}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="agentdoc-hops-") as tmp:
        try:
            tracer = measure(Path(tmp))
        except CheckFailed as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    report(tracer, "-v" in sys.argv[1:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
