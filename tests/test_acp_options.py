"""The user's policy, a document's model and effort, as the calls that set an ACP session up:
only what the agent advertised is sent, an unknown value is refused naming the valid ones, and
an agent with no asking mode is named, never silently trusted."""

from __future__ import annotations

from typing import Any

import pytest

from agentdoc.agents.acp.options import Call, Wanted, offered, setup
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


# As the real agents answer session/new (agents-acp.md): the Claude adapter starts in "auto",
# codex-acp 2 in "agent", OpenCode has only build/plan, Gemini CLI offers modes and models.
CLAUDE_ACP = SessionResult.model_validate(
    {
        "sessionId": "c",
        "configOptions": [
            select("mode", "mode", "auto", "default", "acceptEdits", "plan", "auto"),
            select("model", "model", "default", "default", "opus", "sonnet", "haiku"),
            select("effort", "thought_level", "default", "default", "low", "high", "max"),
            select("fast", "model_config", "off", "on", "off"),
        ],
    }
)
CODEX = SessionResult.model_validate(
    {
        "sessionId": "x",
        "configOptions": [
            select("mode", "mode", "agent", "read-only", "workspace-write", "agent"),
            {
                **select("model", "model", "gpt-5.5"),
                "options": [{"group": "g", "name": "G", "options": [{"value": "gpt-6-luna"}]}],
            },
            select("reasoning_effort", "thought_level", "medium", "low", "medium", "high"),
        ],
    }
)
OPENCODE = SessionResult.model_validate(
    {"sessionId": "o", "configOptions": [select("mode", "mode", "build", "build", "plan")]}
)
GEMINI = SessionResult.model_validate(
    {
        "sessionId": "g",
        "modes": {
            "currentModeId": "default",
            "availableModes": [{"id": "default"}, {"id": "autoEdit"}, {"id": "yolo"}],
        },
        "models": {
            "currentModelId": "auto",
            "availableModels": [{"modelId": "auto"}, {"modelId": "gemini-2.5-pro"}],
        },
    }
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


def test_an_agent_without_an_asking_mode_is_named_not_trusted() -> None:
    done = setup("opencode", OPENCODE, Wanted())
    assert done.calls == ()
    assert done.notes and "opencode has no mode for permission_mode default" in done.notes[0]
    assert "build, plan" in done.notes[0]
    bare = setup("mine", SessionResult(session_id="m"), Wanted())
    assert bare.notes and "mine offers no modes" in bare.notes[0]


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
        "mode": ["default", "autoEdit", "yolo"],
        "model": ["auto", "gemini-2.5-pro"],
    }


def test_opencode_takes_the_policy_in_its_environment_and_is_not_named() -> None:
    assert policy_env(["/usr/bin/opencode", "acp"], "default") == {
        "OPENCODE_PERMISSION": '{"edit": "ask", "bash": "ask"}'
    }
    assert policy_env(["gemini", "--acp"], "default") == {}
    assert setup("opencode", OPENCODE, Wanted(policy_set=True)).notes == ()
