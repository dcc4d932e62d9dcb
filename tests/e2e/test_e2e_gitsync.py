"""git as the sync: a bare repository, the desktop's clone watched by a real `agentdoc watch`
(the real Claude Code CLI against the offline API), and a second clone as the phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.agents.fakeapi.script import ScriptEntry
from agentdoc.records import status
from tests.support.claude_cli import claude_env, require_claude
from tests.support.git import DOC, IDENTITY, git, make_repos, pulled, roles_in
from tests.support.processes import (
    WatchProcess,
    run_cli,
    state_of,
    watching,
    write_quick_config,
)
from tests.support.waiting import wait_for

pytestmark = pytest.mark.e2e

WORDS = " ".join(f"word{i}" for i in range(40))


def held(path: Path) -> str:
    shown = status.read_status(path)
    return (shown.held or "") if shown is not None and shown.state == "pending" else ""


@pytest.fixture
def repos(tmp_path: Path) -> tuple[Path, Path, Path]:
    return make_repos(tmp_path)


@pytest.fixture
def served(
    tmp_path: Path, repos: tuple[Path, Path, Path], request: pytest.FixtureRequest
) -> Iterator[tuple[FakeMessagesAPI, WatchProcess, dict[str, str]]]:
    script: list[ScriptEntry] = request.param
    config = write_quick_config(
        tmp_path / "config.toml",
        git_sync_interval=0.5,
    )
    home = tmp_path / "home"
    home.mkdir()
    with FakeMessagesAPI(script) as api:
        env = claude_env(
            api,
            home,
            AGENTDOC_CLAUDE=str(require_claude()),
            AGENTDOC_CONFIG=str(config),
            AGENTDOC_STATE_DIR=str(tmp_path / "state"),
            **IDENTITY,
        )
        with watching(repos[1], env, tmp_path / "watch.log") as daemon:
            yield api, daemon, env


ANSWERS: list[ScriptEntry] = [
    {"content": [{"type": "text", "text": "First answer."}]},
    {"content": [{"type": "text", "text": WORDS}], "pause_after_deltas": 10},
]


@pytest.mark.parametrize("served", [ANSWERS], indirect=True)
def test_a_prompt_pushed_from_the_phone_is_answered_and_pushed_back(
    repos: tuple[Path, Path, Path],
    served: tuple[FakeMessagesAPI, WatchProcess, dict[str, str]],
) -> None:
    remote, desk, phone = repos
    api, daemon, env = served
    (phone / "chat.md").write_text(DOC + "Hello from the phone?\n")
    git(phone, "commit", "--quiet", "-am", "a prompt")
    git(phone, "push", "--quiet")
    # Whoever can push to the remote reaches this machine's agent: trust it first.
    wait_for(lambda: "does not trust" in held(desk / "chat.md"), what="the untrusted hold")
    assert api.requests == []
    assert run_cli(["trust", str(desk)], env).returncode == 0
    wait_for(lambda: "First answer." in pulled(phone), what="the reply in the phone's clone")
    assert roles_in(phone / "chat.md") == ["user", "assistant", "user"]

    # The second reply pauses; meanwhile the phone pushes another commit, so the desktop's
    # push is rejected once and goes through after merging it.
    (phone / "chat.md").write_text(pulled(phone) + "And a second one?\n")
    git(phone, "commit", "--quiet", "-am", "a second prompt")
    git(phone, "push", "--quiet")
    api.wait_paused(timeout=30)
    (phone / "notes.md").write_text("a note typed on the phone\n")
    git(phone, "add", "notes.md")
    git(phone, "commit", "--quiet", "-m", "a note")
    git(phone, "push", "--quiet")
    api.release()
    wait_for(lambda: "word39" in pulled(phone), what="the second reply in the phone's clone")
    wait_for(lambda: state_of(desk / "chat.md") == "idle", what="the desktop idle")

    text = (phone / "chat.md").read_text()
    assert roles_in(phone / "chat.md") == ["user", "assistant"] * 2 + ["user"]
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    assert (desk / "notes.md").read_text() == "a note typed on the phone\n"
    assert len(api.requests) == 2
    assert [r.user_texts()[-1] for r in api.requests] == [
        "Hello from the phone?",
        "And a second one?",
    ]
    # Nothing was force-pushed: every commit the phone pushed is in the remote's history.
    history = git(remote, "log", "--format=%s", "main")
    assert {"a prompt", "a second prompt", "a note"} <= set(history.splitlines())
    assert "not pushed" not in daemon.log()
