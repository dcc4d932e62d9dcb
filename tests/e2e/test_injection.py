"""No injection (PRODUCT.md §7 promise 6): what the CLI receives, exactly.

The prompt only ever travels on stdin, every value rides in a one-token ``--flag=value`` form, and
permission flags come only from Settings. The fake ``claude`` logs the argv, stdin and cwd it was
started with; one end-to-end test checks that the real CLI reads the one-token forms as intended.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentdoc.agents import AgentRequest
from agentdoc.agents.claude.process import ClaudeCannotStart, build_argv, check_argv
from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.config import Settings
from agentdoc.turn.runner import TurnRunner
from tests.support.claude_cli import claude_env, require_claude
from tests.support.clearance import leave_for, own_leave
from tests.support.fake_claude import FakeClaude

BASE_ARGV = ["-p", "--output-format=stream-json", "--verbose", "--include-partial-messages"]
SESSION = "5b0c0f5e-8d3f-4a51-9a40-0d6b2b7f1c11"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
BARE_FLAGS = frozenset({"-p", "--verbose", "--include-partial-messages", "--fork-session"})
VALUE_FLAGS = frozenset(
    {
        "--output-format",
        "--resume",
        "--session-id",
        "--model",
        "--effort",
        "--append-system-prompt",
        "--permission-mode",
        "--allowed-tools",
        "--add-dir",
        "--setting-sources",
    }
)
PERMISSION_FLAGS = ("--permission-mode", "--allowed-tools", "--add-dir", "--dangerously")


def document(prompt: str, meta: str = "{}") -> str:
    return f"---\ntitle: Injection\nagentdoc: {meta}\n---\n\n# Injection\n\n## User\n\n{prompt}\n"


def run_turn(
    tmp_path: Path, fake: FakeClaude, text: str, **settings: Any
) -> tuple[dict[str, Any], Path]:
    path = tmp_path / "chat.md"
    path.write_text(text, encoding="utf-8")
    outcome = TurnRunner(path, fake.settings(**settings), clear=own_leave, environ=fake.env).run()
    assert outcome.state == "done", outcome.reply.error
    (call,) = fake.calls()
    return call, path


@pytest.mark.parametrize(
    "prompt",
    [
        "-rf everything, please",
        "-",
        "--resume=x",
        "--resume x --fork-session",
        "--dangerously-skip-permissions",
        "--permission-mode=bypassPermissions do it",
        "$(rm -rf ~)",
        "`rm -rf ~`; echo pwned > /tmp/x",
        "line one\n--model=opus\n\n-p line three",
        "'\"unbalanced quotes \\",
    ],
    ids=[
        "dash",
        "lone-dash",
        "resume-eq",
        "resume-space",
        "skip-permissions",
        "permission-mode",
        "command-substitution",
        "backticks",
        "newlines",
        "quotes",
    ],
)
def test_prompt_goes_only_to_stdin_verbatim(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude], prompt: str
) -> None:
    call, path = run_turn(tmp_path, fake_claude("plain_text.ndjson"), document(prompt))
    argv = call["argv"]
    assert argv[:4] == BASE_ARGV
    assert len(argv) == 5 and re.fullmatch(f"--session-id={UUID}", argv[4]), argv
    assert call["stdin"] == prompt
    assert call["cwd"] == str(path.parent)


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        pytest.param(
            "{model: 'claude-opus-4-8[1m]', effort: low}",
            ["--model=claude-opus-4-8[1m]", "--effort=low"],
            id="model-effort",
        ),
        pytest.param(
            "{system: '--dangerously-skip-permissions'}",
            ["--append-system-prompt=--dangerously-skip-permissions"],
            id="system-is-a-flag",
        ),
        pytest.param(
            '{system: "Be brief.\\n--permission-mode=bypassPermissions\\n$(id)"}',
            ["--append-system-prompt=Be brief.\n--permission-mode=bypassPermissions\n$(id)"],
            id="system-multiline",
        ),
        pytest.param(
            f"{{session: {SESSION}, model: sonnet}}",
            [f"--resume={SESSION}", "--model=sonnet"],
            id="resume",
        ),
    ],
)
def test_frontmatter_values_ride_in_one_token_each(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude], meta: str, expected: list[str]
) -> None:
    call, _ = run_turn(tmp_path, fake_claude("plain_text.ndjson"), document("hello", meta))
    extra = [a for a in call["argv"][4:] if not a.startswith("--session-id=")]
    assert extra == expected
    assert call["stdin"] == "hello"


def test_permission_flags_come_only_from_settings(tmp_path: Path, plain_claude: FakeClaude) -> None:
    asks = (
        "{permission_mode: bypassPermissions, dangerously_skip_permissions: true,"
        " allowed_tools: [Bash], add_dirs: [/], permission-mode: bypassPermissions}"
    )
    call, _ = run_turn(
        tmp_path,
        plain_claude,
        document("hello", asks),
        permission_mode="acceptEdits",
        allowed_tools=("Read", "Bash(git *)"),
        add_dirs=("/srv/data",),
    )
    granted = [a for a in call["argv"] if a.startswith(PERMISSION_FLAGS)]
    assert granted == [
        "--permission-mode=acceptEdits",
        "--allowed-tools=Read",
        "--allowed-tools=Bash(git *)",
        "--add-dir=/srv/data",
    ]


def test_a_document_alone_gets_no_permission_flags(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    asks = "{permission_mode: bypassPermissions, allowed_tools: [Bash], add_dirs: [/]}"
    call, _ = run_turn(tmp_path, fake_claude("plain_text.ndjson"), document("hi", asks))
    assert not [a for a in call["argv"] if a.startswith(PERMISSION_FLAGS)]
    assert "bypassPermissions" not in "\n".join(call["argv"])


# --- build_argv as a property ------------------------------------------------------------------

_text = st.text(st.characters(codec="utf-8"), max_size=40)


@given(
    prompt=_text,
    resume=st.none() | _text,
    session_id=st.none() | _text,
    fork=st.booleans(),
    model=st.none() | _text,
    effort=st.none() | _text,
    system=st.none() | _text,
)
def test_every_token_is_a_known_flag_and_values_stay_whole(
    prompt: str,
    resume: str | None,
    session_id: str | None,
    fork: bool,
    model: str | None,
    effort: str | None,
    system: str | None,
) -> None:
    request = AgentRequest(
        prompt=prompt,
        cwd=Path("/"),
        resume=resume,
        session_id=session_id,
        fork=fork,
        model=model,
        effort=effort,
        append_system=system,
        clearance=leave_for(Path("/")),
    )
    argv = build_argv("claude", request, Settings())
    assert argv[0] == "claude"
    values: dict[str, str] = {}
    for token in argv[1:]:
        if token in BARE_FLAGS:
            continue
        flag, eq, value = token.partition("=")
        assert eq and flag in VALUE_FLAGS, token
        values[flag] = value
    assert values.get("--append-system-prompt") == (system or None)
    assert values.get("--model") == (model or None)
    assert values.get("--resume") == (resume or None)
    assert not any(t.startswith(PERMISSION_FLAGS) for t in argv)


@pytest.mark.parametrize(
    ("token", "flag"),
    [("--append-system-prompt=be\0brief", "--append-system-prompt"), ("--model=a\0b", "--model")],
)
def test_a_nul_in_a_value_is_refused_naming_its_flag(token: str, flag: str) -> None:
    with pytest.raises(ClaudeCannotStart, match=f"cannot pass {flag} to claude"):
        check_argv(["claude", "-p", token])


# --- the real CLI reads the one-token forms as values ------------------------------------------


@pytest.mark.e2e
def test_the_real_cli_takes_dash_values_as_values(tmp_path: Path) -> None:
    prompt = "--resume=x\n--dangerously-skip-permissions"
    system = "--permission-mode=bypassPermissions"
    path = tmp_path / "chat.md"
    path.write_text(document(prompt, f"{{system: '{system}'}}"), encoding="utf-8")
    with FakeMessagesAPI([[{"type": "text", "text": "Fine."}]]) as api:
        env = claude_env(api, tmp_path / "home")
        settings = Settings(claude=str(require_claude()), flush_interval=0.05)
        outcome = TurnRunner(path, settings, clear=own_leave, environ=env).run()
        (request,) = api.wait_for_requests(1)
    assert outcome.state == "done", outcome.reply.error
    assert request.user_texts()[-1] == prompt
    system_text = request.body["system"]
    if isinstance(system_text, list):
        system_text = "\n".join(block.get("text", "") for block in system_text)
    assert system in system_text
