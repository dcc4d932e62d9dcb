"""What a session is set to before its first prompt: the user's permission policy as one of the
agent's modes, and a document's model and effort as the agent's config options. Pure: the
process sends the calls this decides.

An agent lists what it takes in its session answer: ``configOptions`` (categories ``mode``,
``model``, ``thought_level``, ``model_config``; set with ``session/set_config_option``), else
``modes`` (``session/set_mode``) and the unstable ``models`` list (``session/set_model``, which
Gemini CLI still offers instead of an option). Only advertised values are ever sent: a model or
effort the agent does not offer is refused before anything is sent, naming the valid ones.

The policy comes from the user's config (``permission_mode``), never from a document. An agent
with no mode for it is not trusted silently: the session's first footer says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from agentdoc.agents.acp.schema import ConfigChoice, ConfigOption, SessionResult
from agentdoc.errors import AgentCannotStart

DEFAULT_POLICY = "default"
# The config's permission_mode → the mode ids agents use for it, best first: Claude's own
# names (the Claude adapter), Gemini CLI's (`default` prompts, `autoEdit`, `yolo`), codex-acp's
# sandboxes (`read-only` asks before edits, `agent` lets its reviewer decide).
POLICY_MODES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "default": ("default", "read-only", "manual", "ask"),
        "acceptEdits": ("acceptEdits", "autoEdit", "workspace-write"),
        "plan": ("plan",),
        "auto": ("auto", "agent"),
        "bypassPermissions": ("bypassPermissions", "yolo", "agent-full-access"),
        "dontAsk": ("dontAsk",),
    }
)
# Where an agent lists reasoning effort: its own category, else a model setting named so.
EFFORT_WORDS = ("effort", "reason", "think")


@dataclass(frozen=True, slots=True)
class Call:
    """One request to send before the prompt (the session id is added by the sender)."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Setup:
    calls: tuple[Call, ...] = ()
    notes: tuple[str, ...] = ()  # what the first footer says: a policy the agent cannot take
    model: str | None = None  # the model value chosen, when one was asked for


@dataclass(frozen=True, slots=True)
class Wanted:
    """What the session should be set to: the user's policy, the document's model and effort."""

    policy: str | None = None
    model: str | None = None
    effort: str | None = None
    policy_set: bool = False  # the agent took the policy at start (its environment)


def setup(name: str, result: SessionResult, wanted: Wanted) -> Setup:
    """The calls that put a just-opened session in the wanted state (AgentCannotStart for a
    model or effort the agent does not offer)."""
    calls: list[Call] = []
    notes: list[str] = []
    mode = mode_call(name, result, wanted.policy or DEFAULT_POLICY)
    if isinstance(mode, str):
        if not wanted.policy_set:
            notes.append(mode)
    elif mode is not None:
        calls.append(mode)
    model = None
    if wanted.model:
        model, call = _model_call(name, result, wanted.model)
        calls.extend(call)
    if wanted.effort:
        effort = _effort_call(name, result, wanted.effort)
        if isinstance(effort, str):
            notes.append(effort)
        elif effort is not None:
            calls.append(effort)
    return Setup(tuple(calls), tuple(notes), model)


def mode_call(name: str, result: SessionResult, policy: str) -> Call | str | None:
    """The call for the policy's mode (None: the session is in it), or a note saying the
    agent has none."""
    preferred = POLICY_MODES.get(policy, ())
    option = _option(result, ("mode",))
    if option is not None:
        values = [c.value for c in option.choices() if c.value]
        found = next((m for m in preferred if m in values), None)
        if found is None:
            return _no_mode(name, policy, values)
        return None if option.current_value == found else _set_option(option, found)
    modes = result.modes
    if modes is not None and modes.available_modes:
        ids = [m.id for m in modes.available_modes]
        found = next((m for m in preferred if m in ids), None)
        if found is None:
            return _no_mode(name, policy, ids)
        return (
            None if modes.current_mode_id == found else Call("session/set_mode", {"modeId": found})
        )
    return (
        f"{name} offers no modes, so agentdoc cannot make it follow permission_mode "
        f"{policy}: its own settings decide what it asks"
    )


def _no_mode(name: str, policy: str, offered: Sequence[str]) -> str:
    return (
        f"{name} has no mode for permission_mode {policy} (it offers: "
        f"{', '.join(offered) or 'none'}): its own settings decide what it asks"
    )


def _model_call(name: str, result: SessionResult, model: str) -> tuple[str, list[Call]]:
    option = _option(result, ("model",))
    if option is not None:
        value = _pick(option.choices(), model, f"{name} has no model {model!r}")
        return value, [] if option.current_value == value else [_set_option(option, value)]
    listed = result.models.available_models if result.models else []
    if listed:
        choices = [ConfigChoice(value=m.model_id, name=m.name) for m in listed]
        value = _pick(choices, model, f"{name} has no model {model!r}")
        current = result.models.current_model_id if result.models else None
        return value, [] if current == value else [Call("session/set_model", {"modelId": value})]
    raise AgentCannotStart(
        f"{name} offers no model choice, so `model: {model}` cannot reach it: remove `model:` "
        "from the document (or the config) for this agent"
    )


def _effort_call(name: str, result: SessionResult, effort: str) -> Call | str | None:
    option = _option(result, ("thought_level",)) or _effort_setting(result)
    if option is None:
        return f"{name} offers no effort setting: `effort: {effort}` not applied"
    value = _pick(option.choices(), effort, f"{name} has no effort {effort!r}")
    return None if option.current_value == value else _set_option(option, value)


def _effort_setting(result: SessionResult) -> ConfigOption | None:
    for option in result.config_options or ():
        named = f"{option.id} {option.name}".lower()
        if option.category == "model_config" and any(w in named for w in EFFORT_WORDS):
            return option
    return None


def _option(result: SessionResult, categories: tuple[str, ...]) -> ConfigOption | None:
    return next((o for o in result.config_options or () if o.category in categories and o.id), None)


def _pick(choices: Sequence[ConfigChoice], wanted: str, missing: str) -> str:
    """The advertised value the person meant: its value, else its name, case aside."""
    for choice in choices:
        if choice.value == wanted:
            return wanted
    folded = wanted.casefold()
    for choice in choices:
        if choice.value and folded in (choice.value.casefold(), choice.name.casefold()):
            return choice.value
    valid = ", ".join(c.value for c in choices if c.value)
    raise AgentCannotStart(f"{missing}; it offers: {valid or 'nothing'}")


def _set_option(option: ConfigOption, value: str) -> Call:
    return Call("session/set_config_option", {"configId": option.id, "value": value})


def offered(result: SessionResult) -> dict[str, list[str]]:
    """What the agent lets a session choose, by what it sets (mode, model, effort…): for
    `agentdoc doctor` and `agentdoc status`."""
    found: dict[str, list[str]] = {}
    for option in result.config_options or ():
        found[option.category or option.id] = [c.value for c in option.choices() if c.value]
    if "mode" not in found and result.modes and result.modes.available_modes:
        found["mode"] = [m.id for m in result.modes.available_modes]
    if "model" not in found and result.models and result.models.available_models:
        found["model"] = [m.model_id for m in result.models.available_models]
    return found
