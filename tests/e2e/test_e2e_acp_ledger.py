"""One ledger for ACP agents too: the real OpenCode, on the fake API with a priced model, says
the session's running cost in ACP's `usage_update`; each footer shows its turn's own cost and
`agentdoc status`'s `spent` counts each turn once — across `undo` (a copy of the session that
starts from the turn before's count) and a cancelled reply.

Every turn sends about the same prompt (OpenCode's own system prompt is most of it), so each
costs about what the first did; a footer that counts an earlier turn too reads double.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.contract import DOC, ROW, serve
from tests.support.processes import run_cli, state_of
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

FOOTER_COST = re.compile(r"<sub>.*?\$(\d+\.\d+)")
WORDS = " ".join(f"word{i}" for i in range(60))


def _priced(env: dict[str, str]) -> None:
    opencode = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    # Dollars per million tokens: OpenCode prices each answer by its usage and says the sum
    # (only for a model whose context window it knows).
    opencode["provider"]["fake"]["models"]["m"] = {
        "cost": {"input": 300.0, "output": 1500.0},
        "limit": {"context": 200_000, "output": 8_192},
    }
    env["OPENCODE_CONFIG_CONTENT"] = json.dumps(opencode)


def test_opencode_footers_and_spent_count_each_turn_once(tmp_path: Path) -> None:
    with serve(tmp_path, ROW["opencode"], doc=DOC.format(name="opencode"), agent=_priced) as it:
        doc, env = it.doc, it.env
        it.turn("First?", "One.")
        it.turn("Second?", "Two.")
        undone = run_cli(["undo", str(doc)], env)
        assert undone.returncode == 0, undone.stderr
        wait_for(lambda: "Two." not in doc.read_text(), what="the reply taken back")
        it.script([{"type": "text", "text": "Two again."}])
        doc.write_text(doc.read_text().replace("Second?", "Second, again?"))
        it.idle_with("Two again.")
        it.script({"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 5})
        it.ask("A long one?")
        it.api.wait_paused()
        wait_for(lambda: "word3" in doc.read_text(), what="the partial reply")
        assert run_cli(["cancel", str(doc)], env).returncode == 0
        wait_for(lambda: state_of(doc) == "idle", what="the cancelled turn to end")
        it.api.release()
        it.turn("And now?", "Four.")
        status = run_cli(["status", "--json", str(doc)], env)

    first, *later = [float(cost) for cost in FOOTER_COST.findall(doc.read_text())]
    assert first > 0 and later, doc.read_text()
    assert all(cost == pytest.approx(first, rel=0.25) for cost in later), (first, later)
    spent = json.loads(status.stdout)["spent"]
    assert spent["total"] == pytest.approx(sum([first, *later]) + first, rel=0.25), spent
