"""The user's policy, a document's model and effort, as the calls that set an ACP session up:
only what the agent advertised is sent, an unknown value is refused naming the valid ones, and
each agent's modes are read for what they do (the policy is matched by meaning, not by name),
and an agent that cannot be made to ask is refused before anything is sent."""

from __future__ import annotations

from typing import Any

import pytest

from agentdoc.agents.acp.options import (
    POLICY_STANCES,
    Call,
    Setup,
    Wanted,
    choose,
    offered,
    setup,
    stance_of,
)
from agentdoc.agents.acp.quirks import policy_env
from agentdoc.agents.acp.schema import SessionResult
from agentdoc.errors import AgentCannotStart


def select(option_id: str, category: str, current: str, *values: str) -> dict[str, Any]:
    return {
        "id": option_id,
        "name": option_id.title(),
        "category": category,
        "type": "select",
        "currentValue": current,
        "options": [{"value": v, "name": v.title()} for v in values],
    }


# Each agent's modes in its own words (id, name, description), as the pinned releases answer
# session/new (agents-acp.md): what the policy is matched against.
MODES: dict[str, list[tuple[str, str, str]]] = {
    "claude-acp": [
        ("default", "Manual", "Always ask before making changes"),
        ("acceptEdits", "Accept edits", "Automatically accept all file edits"),
        ("plan", "Plan", "Create a plan before making changes"),
        ("auto", "Auto", "Claude handles permission decisions"),
    ],
    "gemini": [
        ("default", "Default", "Prompts for approval"),
        ("autoEdit", "Auto Edit", "Auto-approves edit tools"),
        ("yolo", "YOLO", "Auto-approves all tools"),
        ("plan", "Plan", "Read-only mode"),
    ],
    "codex": [
        ("read-only", "Read-only", "Requires approval to edit files and access the internet."),
        (
            "workspace-write",
            "Workspace access",
            "Edit workspace files; ask before writing outside the workspace or accessing the "
            "network.",
        ),
        ("agent", "Auto review", "Only ask for actions detected as potentially unsafe"),
        (
            "agent-full-access",
            "Full access",
            "Unrestricted access to the internet and any file on your computer",
        ),
    ],
    "opencode": [
        ("build", "build", "The default agent. Executes tools based on configured permissions."),
        ("plan", "plan", "Plan mode. Disallows all edit tools."),
    ],
    "qwen": [
        ("plan", "Plan", "Analyze only, do not modify files or execute commands"),
        ("default", "Default", "Require approval for file edits or shell commands"),
        ("auto-edit", "Auto Edit", "Automatically approve file edits"),
        ("auto", "Auto", "LLM classifier auto-approves safe actions, blocks risky ones"),
        ("yolo", "YOLO", "Automatically approve all tools"),
    ],
    # pi-acp's "modes" are pi's thinking levels.
    "pi": [("off", "Thinking: off", ""), ("high", "Thinking: high", "")],
    # Claude Code's own permission modes (no descriptions: its names are all there is).
    "claude": [
        ("default", "", ""),
        ("acceptEdits", "", ""),
        ("plan", "", ""),
        ("auto", "", ""),
        ("bypassPermissions", "", ""),
        ("dontAsk", "", ""),
    ],
}
# Where each starts: the Claude adapter and Qwen Code in their own auto, codex-acp in "agent".
STARTS = {"claude-acp": "auto", "gemini": "default", "codex": "agent", "opencode": "build",
          "qwen": "auto", "pi": "off", "claude": "default"}  # fmt: skip


def mode_option(name: str) -> dict[str, Any]:
    return {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": STARTS[name],
        "options": [{"value": i, "name": n, "description": d} for i, n, d in MODES[name]],
    }


def session(name: str, *options: dict[str, Any]) -> SessionResult:
    """A session answer offering the agent's modes: Gemini CLI and pi as `modes`, the others
    as a `mode` config option."""
    if name in ("gemini", "pi"):
        modes = {
            "currentModeId": STARTS[name],
            "availableModes": [{"id": i, "name": n, "description": d or None}
                               for i, n, d in MODES[name]],
        }  # fmt: skip
        return SessionResult.model_validate({"sessionId": name, "modes": modes,
                                             "configOptions": list(options)})  # fmt: skip
    return SessionResult.model_validate(
        {"sessionId": name, "configOptions": [mode_option(name), *options]}
    )


CLAUDE_ACP = session(
    "claude-acp",
    select("model", "model", "default", "default", "opus", "sonnet", "haiku"),
    select("effort", "thought_level", "default", "default", "low", "high", "max"),
    select("fast", "model_config", "off", "on", "off"),
)
CODEX = session(
    "codex",
    {
        **select("model", "model", "gpt-5.5"),
        "options": [{"group": "g", "name": "G", "options": [{"value": "gpt-6-luna"}]}],
    },
    select("reasoning_effort", "thought_level", "medium", "low", "medium", "high"),
)
OPENCODE = session("opencode")
GEMINI = SessionResult.model_validate(
    session("gemini").model_dump(by_alias=True)
    | {
        "models": {
            "currentModelId": "auto",
            "availableModels": [{"modelId": "auto"}, {"modelId": "gemini-2.5-pro"}],
        },
    }
)


@pytest.mark.parametrize(
    ("agent", "stances"),
    [
        ("claude-acp", ["ask", "edits", "plan", "auto"]),
        ("gemini", ["ask", "edits", "all", "plan"]),
        ("codex", ["ask", "edits", "auto", "all"]),
        ("opencode", ["other", "plan"]),
        ("qwen", ["plan", "ask", "edits", "auto", "all"]),
        ("pi", ["other", "other"]),
        ("claude", ["ask", "edits", "plan", "auto", "all", "deny"]),
    ],
)
def test_each_mode_is_read_for_what_it_lets_the_agent_do_unasked(
    agent: str, stances: list[str]
) -> None:
    assert [stance_of(*mode) for mode in MODES[agent]] == stances


# The policy → the mode each agent is put in (None: it is refused, nothing runs).
CHOSEN: dict[str, dict[str, str | None]] = {
    "default": {"claude-acp": "default", "gemini": "default", "codex": "read-only",
                "qwen": "default", "opencode": "plan", "pi": None, "claude": "default"},
    "acceptEdits": {"claude-acp": "acceptEdits", "gemini": "autoEdit",
                    "codex": "workspace-write", "qwen": "auto-edit", "opencode": "plan",
                    "pi": None, "claude": "acceptEdits"},
    "plan": {"claude-acp": "plan", "gemini": "plan", "codex": "read-only", "qwen": "plan",
             "opencode": "plan", "pi": None, "claude": "plan"},
    "auto": {"claude-acp": "auto", "gemini": "default", "codex": "agent", "qwen": "auto",
             "opencode": "plan", "pi": "", "claude": "auto"},
    "bypassPermissions": {"claude-acp": "default", "gemini": "yolo",
                          "codex": "agent-full-access", "qwen": "yolo", "opencode": "plan",
                          "pi": "", "claude": "bypassPermissions"},
}  # fmt: skip


@pytest.mark.parametrize("policy", list(CHOSEN))
@pytest.mark.parametrize("agent", list(MODES))
def test_the_policy_picks_the_mode_that_means_it_else_the_one_that_asks_most(
    policy: str, agent: str
) -> None:
    stances = {mode[0]: stance_of(*mode) for mode in MODES[agent]}
    choice = choose(agent, policy, stances)
    expected = CHOSEN[policy][agent]
    if expected is None:  # pi: it offers modes, but none asks
        assert choice.mode is None and choice.refusal is not None
        assert f"[agents.{agent}]" in choice.refusal and "bypassPermissions" in choice.refusal
        return
    assert choice.refusal is None
    assert choice.mode == (expected or None)
    exact = choice.mode is not None and stances[choice.mode] == POLICY_STANCES[policy]
    # A nearest mode is said, never chosen silently.
    assert (choice.note is None) == (exact or choice.mode is None), choice.note
    if choice.mode is not None and policy in ("default", "acceptEdits", "plan"):
        # Under a policy that asks, never the agent's own auto or yolo mode.
        assert stances[choice.mode] not in ("auto", "all")


def test_qwen_is_moved_out_of_its_own_auto_mode() -> None:
    qwen = session("qwen")
    assert setup("qwen", qwen, Wanted()).calls == (
        Call("session/set_config_option", {"configId": "mode", "value": "default"}),
    )
    assert setup("qwen", qwen, Wanted("acceptEdits")) == Setup(
        (Call("session/set_config_option", {"configId": "mode", "value": "auto-edit"}),)
    )


def test_the_default_policy_puts_each_agent_in_its_asking_mode() -> None:
    assert setup("claude-acp", CLAUDE_ACP, Wanted()).calls == (
        Call("session/set_config_option", {"configId": "mode", "value": "default"}),
    )
    assert setup("codex", CODEX, Wanted()).calls == (
        Call("session/set_config_option", {"configId": "mode", "value": "read-only"}),
    )
    assert setup("gemini", GEMINI, Wanted()).calls == ()  # it starts asking


def test_other_policies_map_to_the_agents_own_words() -> None:
    assert setup("gemini", GEMINI, Wanted("acceptEdits")).calls == (
        Call("session/set_mode", {"modeId": "autoEdit"}),
    )
    assert (
        setup("codex", CODEX, Wanted("acceptEdits")).calls[0].params["value"] == "workspace-write"
    )
    assert setup("codex", CODEX, Wanted("auto")).calls == ()  # it starts there


def test_an_agent_without_a_mode_for_the_policy_takes_the_one_that_asks_most_and_says_so() -> None:
    done = setup("opencode", OPENCODE, Wanted())
    assert done.calls == (Call("session/set_config_option", {"configId": "mode", "value": "plan"}),)
    assert done.notes and "opencode has no mode for permission_mode default" in done.notes[0]
    assert "build, plan" in done.notes[0] and "puts it in plan" in done.notes[0]


@pytest.mark.parametrize("policy", ["default", "acceptEdits", "plan"])
def test_an_agent_that_cannot_be_made_to_ask_is_refused_before_anything_is_sent(
    policy: str,
) -> None:
    with pytest.raises(AgentCannotStart, match="has no mode that asks") as refused:
        setup("pi", session("pi"), Wanted(policy))
    assert 'permission_mode = "bypassPermissions" under [agents.pi]' in str(refused.value)
    assert "(it offers: off, high)" in str(refused.value)
    assert "may run every tool without asking" in str(refused.value)


def test_the_users_opt_in_lets_an_agent_that_cannot_ask_run() -> None:
    assert setup("pi", session("pi"), Wanted("bypassPermissions")) == Setup()
    assert setup("pi", session("pi"), Wanted("auto")) == Setup()


def test_a_session_with_no_modes_at_all_is_named_not_refused() -> None:
    bare = setup("mine", SessionResult(session_id="m"), Wanted())
    assert bare.calls == () and bare.notes
    assert "mine offers no modes" in bare.notes[0]


def test_model_and_effort_go_through_the_advertised_options() -> None:
    done = setup("claude-acp", CLAUDE_ACP, Wanted(model="Haiku", effort="high"))
    assert done.calls[1:] == (
        Call("session/set_config_option", {"configId": "model", "value": "haiku"}),
        Call("session/set_config_option", {"configId": "effort", "value": "high"}),
    )
    assert done.model == "haiku"
    grouped = setup("codex", CODEX, Wanted(model="gpt-6-luna", effort="medium"))
    assert grouped.calls[1:] == (
        Call("session/set_config_option", {"configId": "model", "value": "gpt-6-luna"}),
    )  # medium is already its effort


def test_gemini_takes_its_model_through_its_own_call_and_says_it_has_no_effort() -> None:
    done = setup("gemini", GEMINI, Wanted(model="gemini-2.5-pro", effort="high"))
    assert done.calls == (Call("session/set_model", {"modelId": "gemini-2.5-pro"}),)
    assert done.notes == ("gemini offers no effort setting: `effort: high` not applied",)


@pytest.mark.parametrize(
    ("result", "wanted", "said"),
    [
        (CLAUDE_ACP, Wanted(model="gpt-5.5"), "has no model 'gpt-5.5'; it offers: default, opus"),
        (CODEX, Wanted(effort="max"), "has no effort 'max'; it offers: low, medium, high"),
        (GEMINI, Wanted(model="haiku"), "it offers: auto, gemini-2.5-pro"),
        (OPENCODE, Wanted(model="haiku"), "offers no model choice"),
    ],
)
def test_a_value_the_agent_does_not_offer_is_refused_before_sending(
    result: SessionResult, wanted: Wanted, said: str
) -> None:
    with pytest.raises(AgentCannotStart, match=said.replace("(", r"\(")):
        setup("agent", result, wanted)


def test_what_an_agent_offers_is_listed_by_what_it_sets() -> None:
    assert offered(CLAUDE_ACP)["thought_level"] == ["default", "low", "high", "max"]
    assert offered(GEMINI) == {
        "mode": ["default", "autoEdit", "yolo", "plan"],
        "model": ["auto", "gemini-2.5-pro"],
    }


def test_opencode_takes_the_policy_in_its_environment_and_is_not_named() -> None:
    assert policy_env(["/usr/bin/opencode", "acp"], "default") == {
        "OPENCODE_PERMISSION": '{"edit": "ask", "bash": "ask"}'
    }
    assert policy_env(["gemini", "--acp"], "default") == {}
    assert setup("opencode", OPENCODE, Wanted(policy_set=True)).notes == ()
