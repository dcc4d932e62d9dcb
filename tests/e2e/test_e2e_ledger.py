"""One ledger: each turn's own cost is recorded once, and the footers and `agentdoc status`'s
`spent` read it — after `undo`, after a cancelled (interrupted) reply, with the daemon's warm
CLI and with a CLI per turn (the real Claude Code CLI through `agentdoc watch`, on the fake API).

Every turn here sends about the same prompt (the CLI's own system prompt is most of it), so
each costs about what the first did; a footer that counts an earlier turn too reads double.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from tests.support.claude_watch import ask, paused, served
from tests.support.processes import command_lines, processes_with_env, run_cli, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

FOOTER_COST = re.compile(r"<sub>.*?\$(\d+\.\d+)")


def footer_costs(path: Path) -> list[float]:
    return [float(cost) for cost in FOOTER_COST.findall(path.read_text())]


def answer(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def test_footers_and_spent_count_each_turn_once(
    tmp_path: Path, chat_folder: Path, warm_sessions: int
) -> None:
    doc = chat_folder / "chat.md"
    script = [answer("One."), answer("Two."), answer("Two again."), paused(10), answer("Four.")]
    with served(tmp_path, chat_folder, script, warm_sessions=warm_sessions) as (api, env, _daemon):
        ask(doc, "First?", "One.")
        ask(doc, "Second?", "Two.")
        undone = run_cli(["undo", str(doc)], env)
        assert undone.returncode == 0, undone.stderr
        wait_for(lambda: "Two." not in doc.read_text(), what="the reply taken back")
        doc.write_text(doc.read_text().replace("Second?", "Second, again?"))
        wait_for(lambda: "Two again." in doc.read_text() and state_of(doc) == "idle", what="redo")
        doc.write_text(doc.read_text() + "A long one?\n")
        api.wait_paused()
        wait_for(lambda: "word5" in doc.read_text(), what="the partial reply")
        assert run_cli(["cancel", str(doc)], env).returncode == 0
        wait_for(lambda: state_of(doc) == "idle", what="the cancelled turn to end")
        api.release()
        ask(doc, "And now?", "Four.")
        status = run_cli(["status", "--json", str(doc)], env)

    first, *later = footer_costs(doc)
    assert later and all(cost == pytest.approx(first, rel=0.1) for cost in later), (first, later)
    spent = json.loads(status.stdout)["spent"]
    # Five turns were paid for: two answered, one taken back, one cancelled, one after it.
    assert (spent["turns"], spent["undone_turns"]) == (5, 1), spent
    assert spent["total"] == pytest.approx(5 * first, rel=0.1), (first, spent)


def streaming_cli(env: dict[str, str]) -> int:
    """The one CLI of this test's daemon (a CLI per turn: the turn's own)."""
    lines = command_lines(processes_with_env("HOME", env["HOME"]))
    [pid] = [pid for pid, line in lines.items() if b"--output-format=stream-json" in line]
    return pid


def test_a_turn_whose_cli_left_no_result_is_estimated_and_counted(
    tmp_path: Path, chat_folder: Path
) -> None:
    """A CLI that exits before it prints its `result` told no cost (a SIGINT under load can
    lose the race with it; a kill, as here, always does), yet the API was paid: the turn costs
    what its stream showed at the price the CLI's last result gave, its footer says the figure
    is an estimate, and `spent` counts it."""
    doc = chat_folder / "chat.md"
    script = [answer("One."), paused(10), answer("Three.")]
    with served(tmp_path, chat_folder, script, warm_sessions=0) as (api, env, _daemon):
        ask(doc, "First?", "One.")
        doc.write_text(doc.read_text() + "A long one?\n")
        api.wait_paused()
        wait_for(lambda: "word5" in doc.read_text(), what="the partial reply")
        os.kill(streaming_cli(env), signal.SIGKILL)
        # Not a cancel the user asked for: the turn failed, and says so.
        wait_for(lambda: state_of(doc) == "error", what="the killed turn to end")
        api.release()
        ask(doc, "And now?", "Three.")
        status = run_cli(["status", "--json", str(doc)], env)

    footers = re.findall(r"<sub>.*?</sub>", doc.read_text())
    assert [("~$" in footer) for footer in footers] == [False, True, False], footers
    first, killed, last = footer_costs(doc)
    assert killed == pytest.approx(first, rel=0.1) and last == pytest.approx(first, rel=0.1)
    spent = json.loads(status.stdout)["spent"]
    assert spent["turns"] == 3 and spent["total"] == pytest.approx(3 * first, rel=0.1), spent
