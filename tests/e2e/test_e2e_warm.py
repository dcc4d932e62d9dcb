"""Warm sessions: `agentdoc watch` keeps a document's real CLI running between turns.

Processes are counted from /proc: the CLIs of one test are the processes whose environment
holds that test's own HOME and whose argv reads prompts from stdin (`--input-format`).
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.document import parser as document
from tests.support.claude_watch import DOC, WORDS, answer, ask, served, warm_clis, warm_env
from tests.support.processes import (
    alive,
    roles,
    run_cli,
    start_watch,
    state_of,
    watching,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def test_the_second_prompt_reaches_the_api_without_a_new_cli(tmp_path: Path, folder: Path) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC)
    script = [answer("First answer."), answer("Second answer."), answer("Third answer.")]
    with served(tmp_path, folder, script) as (api, env, _daemon):
        ask(doc, "First question?", "First answer.")
        [first] = warm_clis(env)
        ask(doc, "Second question?", "Second answer.")
        assert warm_clis(env) == [first]
        ask(doc, "Third question?", "Third answer.")
        assert warm_clis(env) == [first]
        prompts = [r.user_texts()[-1] for r in api.requests]

    assert prompts == ["First question?", "Second question?", "Third question?"]
    parsed = document.parse(doc.read_text())
    assert [t.role for t in parsed.turns] == ["user", "assistant"] * 3 + ["user"]
    assert (
        "Second answer." in parsed.turns[3].content and "Third answer." in parsed.turns[5].content
    )
    # The footer's figures are each turn's own, taken from that turn's `result`.
    assert all("in /" in parsed.turns[i].content for i in (1, 3, 5))


def test_cancel_interrupts_the_turn_and_keeps_the_cli(tmp_path: Path, folder: Path) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC)
    script: list[ScriptEntry] = [
        answer("Warm-up."),
        {"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10},
        answer("After the cancel."),
    ]
    with served(tmp_path, folder, script) as (api, env, _daemon):
        ask(doc, "Warm up.", "Warm-up.")
        [cli] = warm_clis(env)
        doc.write_text(doc.read_text() + "A long answer, please.\n")
        api.wait_paused()
        wait_for(lambda: "word9" in doc.read_text(), what="the partial reply")
        cancelled = run_cli(["cancel", str(doc)], env)
        assert cancelled.returncode == 0, cancelled.stderr
        wait_for(lambda: state_of(doc) == "idle", what="the cancelled turn to end")
        api.release()
        assert warm_clis(env) == [cli]
        ask(doc, "And now?", "After the cancel.")
        assert warm_clis(env) == [cli]

    parsed = document.parse(doc.read_text())
    assert "interrupted" in parsed.turns[3].content and "word59" not in parsed.turns[3].content
    assert [r.user_texts()[-1] for r in api.requests][-1].endswith("And now?")


def test_least_recently_used_cli_is_closed_beyond_the_limit(tmp_path: Path, folder: Path) -> None:
    first, second = folder / "a.md", folder / "b.md"
    first.write_text(DOC)
    second.write_text(DOC)
    script = [answer("A one."), answer("B one."), answer("A two.")]
    with served(tmp_path, folder, script, warm_sessions=1) as (api, env, _daemon):
        ask(first, "A?", "A one.")
        # The daemon's start-up started b.md's CLI ahead (it was the most recent document);
        # A's turn closed it for room, and a CLI still starting takes a moment to exit.
        wait_for(lambda: len(warm_clis(env)) == 1, what="only A's CLI to stay up")
        [cli_a] = warm_clis(env)
        ask(second, "B?", "B one.")
        wait_for(lambda: not alive(cli_a), what="the least recently used CLI to close")
        [cli_b] = warm_clis(env)
        ask(first, "A again?", "A two.")  # a new process, resuming A's session
        wait_for(lambda: not alive(cli_b), what="B's CLI to make room")
        [cli_a2] = warm_clis(env)
        assert cli_a2 not in (cli_a, cli_b)
        # The new process resumed A's session (a plain prompt, not a rebuilt transcript).
        assert api.requests[-1].user_texts()[-1] == "A again?"


def test_an_idle_cli_is_closed_after_warm_idle(tmp_path: Path, folder: Path) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC)
    with served(tmp_path, folder, [answer("Hello.")], warm_idle=0.5) as (_api, env, _daemon):
        ask(doc, "Hi?", "Hello.")
        wait_for(lambda: warm_clis(env) == [], what="the idle CLI to close")


# Two replies within a bound, the second after a CLI is started anew: on a loaded parallel run
# the bound was reached twice (alone it takes 4 s), so it runs with the other bounded tests.
@pytest.mark.serial
def test_a_cli_that_died_between_turns_is_replaced(tmp_path: Path, folder: Path) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC)
    script = [answer("One."), answer("Two.")]
    with served(tmp_path, folder, script) as (api, env, _daemon):
        ask(doc, "First?", "One.")
        [cli] = warm_clis(env)
        # The CLI writes its session file just after the turn's result; a death before that
        # costs the session (the next turn then rebuilds it from the document).
        sessions = Path(env["HOME"]) / ".claude" / "projects"
        # Wait for the reply itself in it: the file appears before the CLI has written it all.
        wait_for(
            lambda: any("One." in f.read_text() for f in sessions.glob("*/*.jsonl")),
            what="the reply in the session file",
        )
        os.killpg(cli, signal.SIGKILL)
        wait_for(lambda: not alive(cli), what="the CLI to die")
        ask(doc, "Second?", "Two.")
        [replacement] = warm_clis(env)
        prompts = [r.user_texts()[-1] for r in api.requests]

    assert replacement != cli
    assert prompts == ["First?", "Second?"]  # sent once each
    assert roles(doc) == ["user", "assistant"] * 2 + ["user"]


def test_a_killed_daemon_leaves_no_cli_behind(tmp_path: Path, folder: Path) -> None:
    idle, busy = folder / "idle.md", folder / "busy.md"
    idle.write_text(DOC)
    busy.write_text(DOC)
    script: list[ScriptEntry] = [
        answer("Idle now."),
        {"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10},
    ]
    with FakeMessagesAPI(script) as api:
        env = warm_env(tmp_path, api)
        daemon = start_watch(folder, env, tmp_path / "watch.log").wait_ready()
        try:
            ask(idle, "Hi?", "Idle now.")
            busy.write_text(busy.read_text() + "Long one.\n")
            api.wait_paused()
            wait_for(lambda: "word9" in busy.read_text(), what="the partial reply")
            clis = warm_clis(env)
            assert len(clis) == 2
        finally:
            daemon.kill()
        # The idle CLI sees the end of its input and exits; the busy one is stopped by the
        # next daemon's start-up recovery.
        with watching(folder, env, tmp_path / "watch2.log") as second:
            wait_for(lambda: not any(alive(pid) for pid in clis), what="no CLI left behind")
            wait_for(lambda: "interrupted" in busy.read_text(), what="the turn marked")
            # The second daemon starts both documents' CLIs ahead (they were used just before
            # it started). Stopped, it closes them; killed, it would leave them to find the end
            # of their input, which a CLI still starting took over 5 s to do under load.
            second.send(signal.SIGTERM)
            second.wait(30)
        api.release()


def test_a_turn_run_elsewhere_meanwhile_is_not_missed(tmp_path: Path, folder: Path) -> None:
    """`agentdoc run` answers turn 2 while the daemon's CLI for turn 1 idles: turn 3 must not
    go to that CLI, which never saw turn 2."""
    doc = folder / "chat.md"
    doc.write_text(DOC.replace("agentdoc: {}", "agentdoc: {trigger: marker}"))
    script = [answer("One."), answer("Two, one-shot."), answer("Three.")]
    with served(tmp_path, folder, script) as (api, env, _daemon):
        ask(doc, "First?\n/send", "One.")
        [cli] = warm_clis(env)
        doc.write_text(doc.read_text() + "Second?\n")
        ran = run_cli(["run", str(doc)], env)
        assert ran.returncode == 0, ran.stderr
        ask(doc, "Third?\n/send", "Three.")
        assert cli not in warm_clis(env)
        third = api.requests[-1]

    assert third.user_texts()[-1] == "Third?"
    assert "Two, one-shot." in json.dumps(third.messages())  # the resumed session has turn 2
    assert roles(doc) == ["user", "assistant"] * 3 + ["user"]


def footer_figures(content: str) -> tuple[str, float, int]:
    """Model, cost and input tokens from a reply's footer line."""
    footer = re.search(r"<sub>(.*)</sub>", content)
    assert footer is not None, content
    model, tokens, cost = footer.group(1).split(" · ")[:3]
    count = float(tokens.split(" in")[0].rstrip("k")) * (1000 if "k in" in tokens else 1)
    return model, float(cost.lstrip("$")), int(count)


def test_each_warm_footer_shows_its_own_turn(tmp_path: Path, folder: Path) -> None:
    doc = folder / "chat.md"
    doc.write_text(DOC)
    script = [answer(f"Answer {n}.") for n in range(4)]
    with served(tmp_path, folder, script) as (_api, env, _daemon):
        for n in range(4):
            ask(doc, f"Question {n}?", f"Answer {n}.")
        assert len(warm_clis(env)) == 1
        status = json.loads((folder / ".agentdoc" / "chat.md.status.json").read_text())

    replies = [t.content for t in document.parse(doc.read_text()).turns if t.role == "assistant"]
    figures = [footer_figures(reply) for reply in replies]
    models, costs, tokens = zip(*figures, strict=True)
    # Near-identical turns cost about the same: not the CLI's running total ($x, 2x, 3x, 4x).
    assert max(costs) < 1.5 * min(costs), figures
    assert max(tokens) < 1.5 * min(tokens), figures
    assert len(set(models)) == 1 and "[" not in models[0], figures
    assert status["cost_usd"] == pytest.approx(costs[-1], abs=0.0006)
