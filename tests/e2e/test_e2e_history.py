"""The real Claude Code CLI through the offline API: a fork at a turn, git per turn, undo."""

from __future__ import annotations

import contextlib
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.agents.fakeapi.wire import RecordedRequest
from agentdoc.cli.commands import cli
from agentdoc.config import Settings
from agentdoc.conversation.forking import fork
from agentdoc.conversation.undoing import undo
from agentdoc.document import parser as document
from agentdoc.errors import AgentdocError
from agentdoc.records.marks import read_marks, spent
from agentdoc.turn.outcome import TurnOutcome
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env
from tests.support.claude_watch import ask, warm_env
from tests.support.clearance import own_leave
from tests.support.documents import chat_in
from tests.support.history import DOC, add_prompt, reply, run, three_turns
from tests.support.paths import REPO_ROOT
from tests.support.processes import run_cli, state_of, watching
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e


def tool(name: str, **arguments: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "name": name, "input": arguments}]


@contextlib.contextmanager
def after_three_turns(
    tmp_path: Path, settings: Settings, last: str
) -> Iterator[tuple[Path, FakeMessagesAPI, dict[str, str]]]:
    """chat.md after three turns of the CLI, the model's next answer `last`: the document,
    the API and the environment."""
    path = tmp_path / "chat.md"
    path.write_text(DOC.format(extra="{}"))
    script = [reply("Answer one."), reply("Answer two."), reply("Answer three."), reply(last)]
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        three_turns(path, settings, env)
        yield path, api, env


def after_turn_1(prompt: str) -> list[tuple[str, str]]:
    """What a session continued from the end of turn 1 sends with `prompt`."""
    return [("user", "First question?"), ("assistant", "Answer one."), ("user", prompt)]


def texts(request: RecordedRequest) -> list[tuple[str, str]]:
    """Each message of the request as (role, its text), system reminders left out."""
    found = []
    for message in request.messages():
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = " ".join(
            str(b.get("text", "")) for b in blocks if not str(b.get("text", "")).startswith("<")
        ).strip()
        if text and message["role"] in ("user", "assistant"):
            found.append((message["role"], text))
    return found


def test_a_fork_at_turn_2_of_3_continues_the_agents_own_messages(
    tmp_path: Path, settings: Settings
) -> None:
    branch = tmp_path / "branch.md"
    with after_three_turns(tmp_path, settings, "Fork.") as (parent, api, env):
        parent_bytes = parent.read_bytes()
        plan = fork(parent, branch, 2, environ=env)
        assert plan.lineage.fork_session and plan.lineage.at
        add_prompt(branch, "Fork question?")
        outcome = run(branch, settings, env)
        requests = api.wait_for_requests(4)

    assert parent.read_bytes() == parent_bytes
    assert texts(requests[3]) == [
        ("user", "First question?"),
        ("assistant", "Answer one."),
        ("user", "Second question?"),
        ("assistant", "Answer two."),
        ("user", "Fork question?"),
    ]
    text = branch.read_text()
    assert "forked from chat.md, turn 2" in text and "seeded" not in text
    assert document.parse(text).meta.session == outcome.session_id


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout


def make_repo(repo: Path) -> None:
    git(repo, "init", "-q")
    git(repo, "config", "user.name", "Test")
    git(repo, "config", "user.email", "test@example.invalid")
    (repo / "README.md").write_text("readme\n")
    (repo / "notes.txt").write_text("notes\n")
    git(repo, "add", "README.md", "notes.txt")
    git(repo, "commit", "-q", "-m", "start")


def test_git_per_turn_commits_only_the_document(tmp_path: Path, settings: Settings) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    make_repo(repo)
    path = repo / "chat.md"
    path.write_text(DOC.format(extra="{git: commit}"))
    (repo / "README.md").write_text("staged work\n")
    git(repo, "add", "README.md")
    (repo / "notes.txt").write_text("unstaged work\n")
    (repo / "new.txt").write_text("untracked\n")
    with FakeMessagesAPI([reply("Answer one.")]) as api:
        run(path, settings, claude_env(api, tmp_path / "home"), mode="start")

    assert git(repo, "log", "-1", "--format=%s") == "chat.md: turn 1 (agentdoc)\n"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["chat.md"]
    assert git(repo, "show", "HEAD:chat.md") == path.read_text()
    # The person's own work is as they left it: still staged, still unstaged, still untracked.
    assert git(repo, "diff", "--cached", "--name-only").split() == ["README.md"]
    assert git(repo, "diff", "--name-only").split() == ["notes.txt"]
    assert "?? new.txt" in git(repo, "status", "--porcelain")
    assert git(repo, "rev-list", "--count", "HEAD") == "2\n"


def test_undo_takes_back_the_reply_the_files_and_the_sessions_memory(
    tmp_path: Path, settings: Settings
) -> None:
    path = chat_in(tmp_path / "work", DOC.format(extra="{}"))
    work = path.parent
    edited = work / "old.txt"
    original = "line one\r\nline twö\r\nno newline at the end".encode()
    edited.write_bytes(original)
    created = work / "new.txt"
    script: list[ScriptEntry] = [
        reply("Answer one."),
        tool("Write", file_path=str(created), content="created\n"),
        tool("Read", file_path=str(edited)),
        tool("Edit", file_path=str(edited), old_string="line one", new_string="line 1"),
        reply("I wrote and edited the files."),
        reply("A fresh answer."),
    ]
    settings = settings.model_copy(update={"permission_mode": "acceptEdits"})
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        run(path, settings, env, mode="start")
        before_turn_2 = path.read_text()
        add_prompt(path, "Please write the files.")
        run(path, settings, env)
        assert created.exists() and edited.read_bytes() != original

        result = CliRunner(env={**env, "AGENTDOC_CONFIG": str(tmp_path / "none.toml")}).invoke(
            cli, ["undo", str(path)], catch_exceptions=False
        )
        assert result.exit_code == 0, result.output
        assert "took turn 2" in result.output and "restored" in result.output
        assert not created.exists()
        assert edited.read_bytes() == original
        text = path.read_text()
        body = before_turn_2.split("---\n", 2)[2]
        assert text.split("---\n", 2)[2] == body.rstrip() + "\n\nPlease write the files.\n"
        doc = document.parse(text)
        assert doc.pending_prompt() == "Please write the files." and doc.turn_count() == 1
        before = document.parse(before_turn_2).meta
        assert doc.meta.session == before.session and doc.meta.resume_at

        run(path, settings, env)
        requests = api.wait_for_requests(6)

    assert texts(requests[5]) == after_turn_1("Please write the files.")
    assert not [
        block
        for message in requests[5].messages()
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block.get("type") in ("tool_use", "tool_result")
    ]
    assert "A fresh answer." in path.read_text()
    assert document.parse(path.read_text()).meta.resume_at is None


def shell_folder(tmp_path: Path) -> tuple[Path, Path]:
    """A working folder with a document, files to edit and delete, and an ignored file."""
    work = tmp_path / "work"
    work.mkdir()
    path = work / "chat.md"
    path.write_text(DOC.format(extra="{}"))
    (work / "old.txt").write_bytes(b"line one\r\nno newline at the end")
    (work / "gone.bin").write_bytes(bytes(range(256)))
    (work / "tool.sh").write_text("#!/bin/sh\n")
    (work / "tool.sh").chmod(0o644)
    (work / ".gitignore").write_text("*.log\n")
    return work, path


SHELL = (
    "printf 'made\\n' > created.txt && mkdir -p sub && echo x > sub/deep.txt && "
    "sed -i 's/one/1/' old.txt && rm gone.bin && chmod +x tool.sh && echo kept > build.log"
)


@contextlib.contextmanager
def shell_turn(
    tmp_path: Path, path: Path, settings: Settings
) -> Iterator[tuple[dict[str, str], dict[str, tuple[bytes, int]]]]:
    """The folder's tree, then one turn in which SHELL ran: the environment and that tree."""
    work = path.parent
    with FakeMessagesAPI([tool("Bash", command=SHELL, description="x"), reply("Done.")]) as api:
        env = claude_env(api, tmp_path / "home")
        before = tree(work)
        run(path, settings, env, mode="start")
        yield env, before


def tree(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".agentdoc" not in p.parts and p.name != "chat.md"
    }


def test_undo_takes_back_what_a_shell_command_created_changed_and_deleted(
    tmp_path: Path, settings: Settings
) -> None:
    work, path = shell_folder(tmp_path)
    settings = settings.model_copy(update={"allowed_tools": ("Bash",)})
    with shell_turn(tmp_path, path, settings) as (env, before):
        assert (work / "created.txt").exists() and not (work / "gone.bin").exists()
        result = CliRunner(env={**env, "AGENTDOC_CONFIG": str(tmp_path / "none.toml")}).invoke(
            cli, ["undo", str(path)], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    assert "took turn 1" in result.output and "5 file(s) restored" in result.output
    after = tree(work)
    # The ignored file is the user's to keep: undo covers what the folder's .gitignore keeps.
    assert after.pop("build.log")[0] == b"kept\n"
    assert after == before and not (work / "sub").exists()
    assert document.parse(path.read_text()).pending_prompt() == "First question?"


def test_undo_refuses_when_the_user_changed_a_file_since_unless_forced(
    tmp_path: Path, settings: Settings
) -> None:
    work, path = shell_folder(tmp_path)
    settings = settings.model_copy(update={"allowed_tools": ("Bash",)})
    with shell_turn(tmp_path, path, settings) as (env, before):
        (work / "created.txt").write_text("mine now\n")
        text = path.read_bytes()
        with pytest.raises(AgentdocError, match=r"created.txt changed after the turn"):
            undo(path, settings, env, clear=own_leave)
        assert path.read_bytes() == text and (work / "created.txt").read_text() == "mine now\n"
        assert not (work / "gone.bin").exists()
        done = undo(path, settings, env, clear=own_leave, force=True)
    after = tree(work)
    after.pop("build.log")
    assert done.restored and after == before  # the user's version of created.txt went too


def test_undo_3_takes_back_three_turns_of_files_and_replies(
    tmp_path: Path, settings: Settings
) -> None:
    work, path = shell_folder(tmp_path)
    (work / "notes.md").write_text("notes\n")
    script: list[ScriptEntry] = [
        tool("Write", file_path=str(work / "one.txt"), content="1\n"),
        reply("Turn one wrote."),
        tool("Bash", command="echo two >> notes.md && rm gone.bin", description="x"),
        reply("Turn two ran."),
        tool("Bash", command="printf 3 > one.txt && chmod +x tool.sh", description="x"),
        reply("Turn three ran."),
        reply("Again from the start."),
    ]
    update = {"allowed_tools": ("Bash", "Write"), "permission_mode": "acceptEdits"}
    settings = settings.model_copy(update=update)
    with FakeMessagesAPI(script) as api:
        env = claude_env(api, tmp_path / "home")
        before = tree(work)
        before_text = path.read_text()
        run(path, settings, env, mode="start")
        for prompt in ("Second?", "Third?"):
            add_prompt(path, prompt)
            run(path, settings, env)
        assert tree(work) != before
        done = run_cli(["undo", str(path), "3"], env)
        assert done.returncode == 0, done.stderr
        assert "took turns 1-3" in done.stdout
        assert tree(work) == before
        assert path.read_text().split("---\n", 2)[2] == before_text.split("---\n", 2)[2]
        assert document.parse(path.read_text()).meta.session is None
        kept = (work / ".agentdoc" / "chat.md.undone.md").read_text()
        assert "Second?" in kept and "Third?" in kept and "Turn three ran." in kept
        run(path, settings, env)
        requests = api.wait_for_requests(7)
    assert texts(requests[6]) == [("user", "First question?")]


def footer_costs(path: Path) -> list[float]:
    return [float(cost) for cost in FOOTER_COST.findall(path.read_text())]


FOOTER_COST = re.compile(r"<sub>.*?\$(\d+\.\d+)")


def test_undo_2_of_3_continues_the_session_from_the_end_of_turn_1_and_counts_its_cost(
    tmp_path: Path, settings: Settings
) -> None:
    """The undone turns' cost stays counted (`agentdoc status`), and the next turn's footer
    shows its own cost, not theirs as well."""
    with after_three_turns(tmp_path, settings, "New.") as (path, api, env):
        costs = footer_costs(path)
        assert len(costs) == 3 and all(costs), costs
        before = spent(path)
        done = undo(path, settings, env, clear=own_leave, count=2)
        assert (done.turn, done.count) == (2, 2)
        after = spent(path)
        assert (after.total, after.turns, after.undone_turns) == (before.total, 3, 2)
        assert after.undone == pytest.approx(costs[1] + costs[2], abs=0.002)
        assert document.parse(path.read_text()).meta.resume_at
        run(path, settings, env)
        requests = api.wait_for_requests(4)
    assert texts(requests[3]) == after_turn_1("Second question?")
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


def test_undo_refuses_with_nothing_to_undo_and_while_a_turn_streams(
    tmp_path: Path, settings: Settings
) -> None:
    path = tmp_path / "chat.md"
    path.write_text(DOC.format(extra="{}"))
    with pytest.raises(AgentdocError, match="nothing to undo"):
        undo(path, settings, clear=own_leave)
    words = " ".join(f"word{i}" for i in range(30))
    with FakeMessagesAPI([{"content": reply(words), "pause_after_deltas": 5}]) as api:
        env = claude_env(api, tmp_path / "home")
        runner = TurnRunner(path, settings, clear=own_leave, mode="start", environ=env)
        outcomes: list[TurnOutcome] = []
        worker = threading.Thread(target=lambda: outcomes.append(runner.run()))
        worker.start()
        try:
            api.wait_paused()
            wait_for(lambda: "word3" in path.read_text(), "the reply to stream")
            streaming = path.read_bytes()
            with pytest.raises(AgentdocError, match="a reply is streaming into it"):
                undo(path, settings, env, clear=own_leave)
            assert path.read_bytes() == streaming
        finally:
            api.release()
            worker.join(60)
    assert outcomes[0].state == "done"


def test_under_the_daemon_undo_waits_for_a_save_and_the_warm_turns_can_branch(
    tmp_path: Path, folder: Path
) -> None:
    doc = folder / "chat.md"
    doc.write_text("---\nagentdoc: {}\n---\n\n## User\n\n")
    script = [reply("Warm one."), reply("Warm two."), reply("Warm three."), reply("Again.")]
    with FakeMessagesAPI(script) as api:
        # The daemon runs this checkout's agentdoc, wherever the test runs from.
        env = {**warm_env(tmp_path, api), "PYTHONPATH": str(REPO_ROOT)}
        with watching(folder, env, tmp_path / "watch.log") as daemon:
            for n, word in enumerate(("one", "two", "three"), 1):
                ask(doc, f"Question {word}?", f"Warm {word}.")
                assert set(read_marks(doc)) == set(range(1, n + 1)), [
                    (p.name, p.read_text()[:300]) for p in (folder / ".agentdoc").iterdir()
                ]
            done = run_cli(["undo", str(doc)], env)
            assert done.returncode == 0, done.stderr
            wait_for(lambda: "pending again after `agentdoc undo`" in daemon.log(), "the daemon")
            assert "changed in bulk" not in daemon.log()
            assert len(api.requests) == 3
            doc.write_text(doc.read_text().replace("Question three?", "Question three, again?"))
            wait_for(lambda: "Again." in doc.read_text() and state_of(doc) == "idle", "a reply")
        requests = api.wait_for_requests(4)

    assert texts(requests[3]) == [
        ("user", "Question one?"),
        ("assistant", "Warm one."),
        ("user", "Question two?"),
        ("assistant", "Warm two."),
        ("user", "Question three, again?"),
    ]


def footer_cost(path: Path) -> list[float]:
    """The cost in each reply's footer line."""
    replies = [t.content for t in document.parse(path.read_text()).turns if t.role == "assistant"]
    found = [re.search(r"<sub>[^<]*· \$([0-9.]+) ·", reply) for reply in replies]
    assert all(found), replies
    return [float(match.group(1)) for match in found if match]


@pytest.mark.parametrize("at", [None, 2], ids=["fork-at-the-last-turn", "fork-at-turn-2"])
def test_each_one_shot_footer_shows_its_own_cost_a_forks_first_too(
    tmp_path: Path, settings: Settings, at: int | None
) -> None:
    """Claude Code 2.1.330 counts a resumed or forked session's earlier cost in the total a
    one-shot run reports; near-identical turns must still read about the same."""
    branch = tmp_path / "branch.md"
    with after_three_turns(tmp_path, settings, "Fork.") as (parent, _api, env):
        fork(parent, branch, at, environ=env)
        add_prompt(branch, "Fork question?")
        run(branch, settings, env)
    costs = footer_cost(parent) + footer_cost(branch)[-1:]
    assert len(costs) == 4 and min(costs) > 0, costs
    assert max(costs) < 1.5 * min(costs), costs  # not the running total ($x, 2x, 3x, 4x)
