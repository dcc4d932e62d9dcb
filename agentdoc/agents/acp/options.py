"""What a session is set to before its first prompt: the user's permission policy as one of the
agent's modes, and a document's model and effort as the agent's config options. Pure: the
process sends the calls this decides.

An agent lists what it takes in its session answer: ``configOptions`` (categories ``mode``,
``model``, ``thought_level``, ``model_config``; set with ``session/set_config_option``), else
``modes`` (``session/set_mode``) and the unstable ``models`` list (``session/set_model``, which
Gemini CLI still offers instead of an option). Only advertised values are ever sent: a model or
effort the agent does not offer is refused before anything is sent, naming the valid ones.

The policy comes from the user's config (``permission_mode``, for every agent or one
``[agents.NAME]`` entry), never from a document. It is matched to the agent's modes by what
they do, read from each mode's id, name and description, not by a list of names: Qwen Code's
``auto-edit`` is ``acceptEdits`` as much as Gemini CLI's ``autoEdit``. Where no mode means the
policy, the session goes to the mode that asks most, and a note says so (status, doctor, the
first footer); an agent is never left in its own auto or yolo mode under a policy that asks.
An agent that offers modes none of which asks (pi's are thinking levels) is not run under
such a policy: its turn is refused before any prompt is sent, saying which setting lets it
run. A session answer with no modes at all (some agents' resumed sessions) is only said.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from agentdoc.agents.acp.schema import ConfigChoice, ConfigOption, SessionResult
from agentdoc.errors import AgentCannotStart

DEFAULT_POLICY = "default"

# What a mode lets the agent do unasked, by meaning: "ask" asks before edits and commands,
# "edits" makes edits but asks before commands, "plan" reads only, "auto" lets the agent (a
# model, a reviewer) decide what to ask, "all" runs everything, "deny" never asks and refuses
# what was not allowed beforehand; "other": its words say none of these (a thinking level).
Stance = Literal["ask", "edits", "plan", "auto", "all", "deny", "other"]
# The config's permission_mode → the stance of the mode it means.
POLICY_STANCES: Mapping[str, Stance] = MappingProxyType(
    {
        "default": "ask",
        "acceptEdits": "edits",
        "plan": "plan",
        "auto": "auto",
        "bypassPermissions": "all",
        "dontAsk": "deny",
    }
)
# Where no mode means the policy, the agent's mode that asks most, in this order.
MOST_ASKING: tuple[Stance, ...] = ("ask", "edits", "plan")
# The policies under which nothing may run unasked: an agent that cannot be made to ask is not
# run under them (the user opts in with a policy of its own for it, see `refusal`).
ASKING_POLICIES = ("default", "acceptEdits", "plan", "dontAsk")
# The words that say what a mode does, checked in this order (the first that matches wins):
# the agents' own ids, names and descriptions (agents-acp.md) — Claude's and the Claude
# adapter's, Gemini CLI's, codex-acp's sandboxes, Qwen Code's, OpenCode's build and plan.
_MEANINGS: tuple[tuple[Stance, re.Pattern[str]], ...] = (
    ("deny", re.compile(r"\b(dont|don't|do not|never) ask\b")),
    (
        "all",
        re.compile(
            r"\b(yolo|bypass|full access|unrestricted|approves? all|all tools|"
            r"skip\w* permissions?|dangerously)\b"
        ),
    ),
    (
        "auto",
        re.compile(
            r"\b(classifier|auto review|handles permission|decides|potentially unsafe|"
            r"safe actions)\b|\A(auto|agent) \|"
        ),
    ),
    (
        "edits",
        re.compile(
            r"\b(auto ?edits?|accept\w* (all )?(file )?edits|approves? (file )?edits?|"
            r"edit workspace files|workspace write)\b"
        ),
    ),
    ("ask", re.compile(r"\b(approval|ask|asks|prompts?|manual|confirm\w*|require\w*)\b")),
    ("plan", re.compile(r"\b(plan|read ?only|analy[sz]e only)\b")),
    # A bare "default", with no words of its own: every agent above asks in its "default".
    ("ask", re.compile(r"\Adefault \|")),
)


@dataclass(frozen=True, slots=True)
class Mode:
    """One mode an agent offers, in its own words."""

    id: str
    name: str = ""
    description: str = ""

    @property
    def stance(self) -> Stance:
        return stance_of(self.id, self.name, self.description)


def stance_of(mode_id: str, name: str = "", description: str = "") -> Stance:
    """What a mode lets the agent do unasked, read from its id, name and description."""
    text = _words(mode_id) + " | " + _words(name) + " | " + _words(description)
    for stance, words in _MEANINGS:
        if words.search(text):
            return stance
    return "other"


def _words(text: str) -> str:
    """Lower-case words: "acceptEdits", "auto-edit" and "read_only" read as plain words."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return re.sub(r"[-_./]+", " ", spaced).lower().strip()


@dataclass(frozen=True, slots=True)
class Choice:
    """The mode a session is put in for the user's policy."""

    mode: str | None  # the mode to be in (None: leave the session as it is)
    note: str | None = None  # what status, doctor and the first footer say (a nearest mode)
    refusal: str | None = None  # why the agent is not run under this policy (it cannot ask)


def choose(name: str, policy: str, stances: Mapping[str, Stance]) -> Choice:
    """The mode whose meaning is the policy's; else the one that asks most, said in a note;
    else (no mode asks) a refusal under an asking policy. Never the agent's own auto or yolo
    mode unless the policy is that. `stances`: each offered mode's, in the agent's order."""
    if not stances:
        # A session answer with no modes (some agents' resumed sessions too): nothing to
        # choose from, and nothing known of what it does; said, not refused.
        return Choice(
            None,
            f"{name} offers no modes, so agentdoc cannot make it follow permission_mode "
            f"{policy}: its own settings decide what it asks",
        )
    wanted = POLICY_STANCES.get(policy, "ask")
    exact = next((m for m, s in stances.items() if s == wanted), None)
    if exact is not None:
        return Choice(exact)
    offered = ", ".join(stances)
    for stance in MOST_ASKING:
        nearest = next((m for m, s in stances.items() if s == stance), None)
        if nearest is not None:
            return Choice(
                nearest,
                f"{name} has no mode for permission_mode {policy} (it offers: {offered}): "
                f"agentdoc puts it in {nearest}, its mode that asks most",
            )
    if policy not in ASKING_POLICIES:
        return Choice(None)  # the user lets tools run unasked: nothing to hold it to
    return Choice(None, refusal=refusal(name, policy, offered))


def refusal(name: str, policy: str, offered: str) -> str:
    return (
        f"{name} has no mode that asks before it runs a tool (it offers: {offered}), so "
        f"agentdoc cannot hold it to permission_mode {policy}: it may run every tool "
        f"without asking. Its turns wait until you allow that: set "
        f'permission_mode = "bypassPermissions" under [agents.{name}] in your agentdoc config'
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
    model or effort the agent does not offer, or an agent that cannot be made to ask under an
    asking policy: nothing is sent to it then)."""
    calls: list[Call] = []
    notes: list[str] = []
    if not wanted.policy_set:
        choice, call = mode_call(name, result, wanted.policy or DEFAULT_POLICY)
        if choice.refusal is not None:
            raise AgentCannotStart(choice.refusal)
        notes.extend([choice.note] if choice.note else [])
        calls.extend([call] if call else [])
    model = None
    if wanted.model:
        model, call_list = _model_call(name, result, wanted.model)
        calls.extend(call_list)
    if wanted.effort:
        effort = _effort_call(name, result, wanted.effort)
        if isinstance(effort, str):
            notes.append(effort)
        elif effort is not None:
            calls.append(effort)
    return Setup(tuple(calls), tuple(notes), model)


def modes_of(result: SessionResult) -> list[Mode]:
    """The modes a session offers, in the agent's words: its `mode` option, else its modes."""
    option = _option(result, ("mode",))
    if option is not None:
        return [Mode(c.value, c.name, c.description or "") for c in option.choices() if c.value]
    listed = result.modes.available_modes if result.modes else []
    return [Mode(m.id, m.name, m.description or "") for m in listed if m.id]


def stances(result: SessionResult) -> dict[str, Stance]:
    """Each offered mode's meaning, by its id (remembered for `agentdoc status`)."""
    return {mode.id: mode.stance for mode in modes_of(result)}


def mode_call(name: str, result: SessionResult, policy: str) -> tuple[Choice, Call | None]:
    """The mode for the policy, and the call that sets it (None: the session is in it)."""
    choice = choose(name, policy, stances(result))
    if choice.mode is None:
        return choice, None
    option = _option(result, ("mode",))
    if option is not None:
        if option.current_value == choice.mode:
            return choice, None
        return choice, _set_option(option, choice.mode)
    if result.modes is not None and result.modes.current_mode_id == choice.mode:
        return choice, None
    return choice, Call("session/set_mode", {"modeId": choice.mode})


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
