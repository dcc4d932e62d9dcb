"""One document's fault is that document's: an exception in any handler (discovery, a change,
a turn's end, a hint, a repair) is told in its status and the daemon goes on serving the
others, and that document again on its next save.

The exception is injected into the real daemon's handler for one document only; the daemon
runs with its real watcher on real files and a replaying fake `claude`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.daemon.service import Daemon
from agentdoc.records import status
from tests.support.daemon import DOC, Running, make_daemon, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

KINDS = ("discovery", "change", "turn end", "hint", "repair")
HANDLERS = {"turn end": "_on_done"}


class Injected(RuntimeError):
    pass


def _failing(original: Callable[..., Any], bad: Path) -> Callable[..., Any]:
    def handler(path: Path, *args: Any, **kwargs: Any) -> Any:
        if path == bad:
            raise Injected("injected fault")
        return original(path, *args, **kwargs)

    return handler


def inject(daemon: Daemon, kind: str, bad: Path) -> None:
    """Make `kind`'s handler raise for `bad` (and only for it)."""
    if kind == "hint":
        daemon.hints.hint = _failing(daemon.hints.hint, bad)  # type: ignore[method-assign]
        return
    if kind == "change":
        daemon.saves.on_change = _failing(daemon.saves.on_change, bad)  # type: ignore[method-assign]
        return
    if kind == "discovery":
        daemon.discovery.one = _failing(daemon.discovery.one, bad)  # type: ignore[method-assign]
        return
    if kind == "repair":
        daemon.repairs.mend = _failing(daemon.repairs.mend, bad)  # type: ignore[method-assign]
        daemon.repairs.owe(bad, None)  # so the periodic retry calls it
        return
    setattr(daemon, HANDLERS[kind], _failing(getattr(daemon, HANDLERS[kind]), bad))


def trigger(kind: str, bad: Path) -> None:
    if kind in ("change", "turn end"):
        bad.write_text(DOC + "a prompt\n")
    elif kind == "hint":
        bad.write_text(DOC.replace("# Chat", "# Chat, retitled"))  # a `## User` waits


def told_error(doc: Path) -> bool:
    current = status.read_status(doc)
    return (
        current is not None
        and current.state == "error"
        and "unexpected error: injected fault" in (current.error or "")
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_fault_in_one_document_leaves_the_others_served(
    kind: str, folder: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    bad, good = folder / "bad.md", folder / "good.md"
    bad.write_text(DOC)
    good.write_text(DOC)
    # Each document its own session, as with the real CLI: two documents that carry one session
    # are a document and its copy (a session lives in one document), and the copy is not run.
    claude = fake_claude("plain_text.ndjson", own_session="1")
    daemon = make_daemon(folder, claude, retry_interval=0.2)
    inject(daemon, kind, bad)
    with Running(daemon, discovered=True):
        trigger(kind, bad)
        wait_for(lambda: told_error(bad), "the fault told in the status")
        good.write_text(DOC + "hello\n")
        wait_for(lambda: roles(good) == ["user", "assistant", "user"], "the other's reply")
        if kind in HANDLERS:
            # Tried again on its next save, now that nothing fails.
            vars(daemon).pop(HANDLERS[kind])
            bad.write_text(bad.read_text() + "once more\n")
            wait_for(lambda: roles(bad)[-2:] == ["assistant", "user"], "the retried reply")
            wait_for(lambda: status.read_status(bad).state == "idle", "its status idle")  # type: ignore[union-attr]


def test_the_terminal_gets_one_line_and_a_log_file_the_traceback() -> None:
    import logging

    from agentdoc.cli.logs import OneLine

    try:
        raise Injected("injected fault")
    except Injected as exc:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "bad.md: boom", None, None)
        record.exc_info = (type(exc), exc, exc.__traceback__)
    terminal = OneLine("%(levelname)s: %(message)s").format(record)
    assert terminal == "ERROR: bad.md: boom"
    logged = logging.Formatter("%(message)s").format(record)  # the same record, after
    assert "Traceback" in logged and "injected fault" in logged
