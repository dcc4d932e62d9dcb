"""With the real Claude CLI on the fake API: after `undo`, the undone turns' cost stays counted
(`agentdoc status`), and the next turn's footer shows its own cost, not theirs as well."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.cli import cli
from agentdoc.config import Settings
from agentdoc.conversation.undoing import undo
from agentdoc.records.marks import spent
from tests.support.claude_cli import claude_env
from tests.support.clearance import own_leave
from tests.support.history import DOC, add_prompt, reply, run, three_turns

pytestmark = pytest.mark.e2e

FOOTER_COST = re.compile(r"<sub>.*?\$(\d+\.\d+)")


def footer_costs(path: Path) -> list[float]:
    return [float(cost) for cost in FOOTER_COST.findall(path.read_text())]


def test_undone_turns_stay_counted_and_the_next_turn_costs_its_own(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(DOC.format(extra="{}"))
    script = [reply("Answer one."), reply("Answer two."), reply("Answer three."), reply("New.")]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        three_turns(path, settings, env)
        costs = footer_costs(path)
        assert len(costs) == 3 and all(costs), costs
        before = spent(path)
        undo(path, settings, env, clear=own_leave, count=2)
        after = spent(path)
        assert (after.total, after.turns, after.undone_turns) == (before.total, 3, 2)
        assert after.undone == pytest.approx(costs[1] + costs[2], abs=0.002)
        add_prompt(path, "Second question, again?")
        run(path, settings, env)
    first, again = footer_costs(path)
    assert first == costs[0]
    # Its context is turn 2's (turn 1, then a prompt): about turn 2's cost, not turns 2 and 3's
    # on top of its own (the CLI's total for the fork counts the session up to turn 1 only).
    assert again == pytest.approx(costs[1], rel=0.25), (costs, again)
    output = CliRunner().invoke(cli, ["status", str(path)], env=env).output
    found = re.search(r"spent: \$(\d+\.\d+) in 4 turns \(\$(\d+\.\d+) of it in 2 undone\)", output)
    assert found is not None, output
    assert float(found[1]) == pytest.approx(sum(costs) + again, abs=0.002)
    assert float(found[2]) == pytest.approx(costs[1] + costs[2], abs=0.002)
