"""The agents a document may name: built-ins plus the user's `[agents.NAME]` config entries.

An agent is data (a name, the protocol agentdoc speaks to it, the command that starts it and
what it adds to the environment), never code. A document names an agent; the command comes only
from here, so a document can never choose a program to run (PRODUCT.md §8).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from types import MappingProxyType
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agentdoc.agents.base.agent import Agent
from agentdoc.config import AGENT_NAME, AgentConfig, Settings
from agentdoc.errors import AgentdocError

Protocol = Literal["claude", "acp"]
# Each protocol's `Agent`, by the sub-package and name it lives under: a new protocol is a
# sub-package and a row here. A protocol is loaded when an agent that speaks it is first
# used, so a one-shot Claude turn never imports the ACP client (nor the reverse).
PROTOCOLS: Mapping[Protocol, tuple[str, str]] = MappingProxyType(
    {"claude": ("agentdoc.agents.claude", "CLAUDE"), "acp": ("agentdoc.agents.acp", "ACP")}
)
# Whose a session is when a document or record does not say: it comes from before agentdoc
# spoke to any other agent than Claude Code.
LEGACY_AGENT = "claude"


class AgentSpec(BaseModel):
    """One agent: how to start it and which protocol it speaks."""

    model_config = ConfigDict(frozen=True)

    name: str
    protocol: Protocol
    command: tuple[str, ...] = Field(min_length=1)
    env: Mapping[str, str] = Field(default_factory=dict)
    builtin: bool = False
    permission_mode: str | None = None  # its entry's own policy (None: the config's)

    def describe(self) -> str:
        return f"{self.name} ({' '.join(self.command)})"

    @property
    def title(self) -> str:
        """Its name for people: a built-in's product name, else its name in the config."""
        return TITLES.get(self.name, self.name) if self.builtin else self.name

    def settings(self, settings: Settings) -> Settings:
        """The settings its turns run under: its entry's permission_mode over the config's."""
        if self.permission_mode is None:
            return settings
        return settings.model_copy(update={"permission_mode": self.permission_mode})

    @property
    def agent(self) -> Agent:
        """Its protocol's `Agent`: what it can do, and how it is started."""
        return protocol_agent(self.protocol)


def protocol_agent(protocol: Protocol) -> Agent:
    """The `Agent` of a protocol, its sub-package loaded on first use."""
    module, name = PROTOCOLS[protocol]
    agent: Agent = getattr(import_module(module), name)
    return agent


# The npm package each built-in ships in, for install hints.
PACKAGES: Mapping[str, str] = MappingProxyType(
    {
        "claude": "@anthropic-ai/claude-code",
        "gemini": "@google/gemini-cli",
        "codex": "@agentclientprotocol/codex-acp",
        "opencode": "opencode-ai",
    }
)
TITLES: Mapping[str, str] = MappingProxyType(
    {"claude": "Claude", "gemini": "Gemini", "codex": "Codex", "opencode": "OpenCode"}
)
_BUILTIN_ACP: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "gemini": ("gemini", "--acp"),
        "codex": ("codex-acp",),
        "opencode": ("opencode", "acp"),
    }
)


# What a built-in's process is started with besides the user's environment. Gemini CLI starts
# a second copy of itself to raise its heap limit, unless told it is that copy already: the
# first copy then only waits, and each start costs twice the CPU (1.4 s more, measured) and
# memory. An agent's context window fits Node's default heap.
_BUILTIN_ENV: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {"gemini": MappingProxyType({"GEMINI_CLI_NO_RELAUNCH": "true"})}
)


def agent_named(name: str) -> Agent:
    """The `Agent` of the agent called ``name`` in a record (a turn's mark), without the
    config: only a built-in can speak anything but ACP, and built-ins keep their protocol."""
    return protocol_agent("claude" if name == LEGACY_AGENT else "acp")


def recorded_owner(name: str) -> str | None:
    """Whose session a document records beside it (`session_agent`): none for the agent whose
    sessions were recorded before any other agent's, so its documents stay as they were."""
    return None if name == LEGACY_AGENT else name


def package_of(agent: AgentSpec) -> str | None:
    """The npm package a built-in agent ships in (None for the user's own agents)."""
    return PACKAGES.get(agent.name) if agent.builtin else None


def builtin_agents(settings: Settings) -> dict[str, AgentSpec]:
    """The built-ins before the config's overrides: Claude natively (the `claude` setting names
    its program), the others over ACP."""
    agents = {
        LEGACY_AGENT: AgentSpec(name=LEGACY_AGENT, protocol="claude", command=(settings.claude,))
    }
    for name, command in _BUILTIN_ACP.items():
        env = dict(_BUILTIN_ENV.get(name, {}))
        agents[name] = AgentSpec(name=name, protocol="acp", command=command, env=env)
    return {name: spec.model_copy(update={"builtin": True}) for name, spec in agents.items()}


def known_agents(settings: Settings) -> dict[str, AgentSpec]:
    """Every agent a document may name, by name (sorted): built-ins, overridden or not, and the
    user's own, which speak ACP."""
    agents = builtin_agents(settings)
    for name, entry in settings.agents.items():
        agents[name] = _from_config(name, entry, agents.get(name))
    return dict(sorted(agents.items()))


def _from_config(name: str, entry: AgentConfig, builtin: AgentSpec | None) -> AgentSpec:
    if builtin is not None and builtin.protocol == "claude" and len(entry.command) != 1:
        # agentdoc builds Claude's argv itself; only the program is the user's to choose.
        raise AgentdocError(
            f"[agents.claude] command must name only the claude program, got {list(entry.command)}"
        )
    protocol: Protocol = "acp" if builtin is None else builtin.protocol
    return AgentSpec(
        name=name,
        protocol=protocol,
        command=entry.command,
        # An entry overriding a built-in keeps what the built-in adds, unless it says otherwise.
        env={**(builtin.env if builtin is not None else {}), **entry.env},
        builtin=builtin is not None,
        permission_mode=entry.permission_mode,
    )


def resolve_agent(requested: object, settings: Settings, *, where: str = "") -> AgentSpec:
    """The agent a document (or option) asks for, None meaning the config's default.

    Anything that is not the name of a known agent (a list, a command with spaces, a leading
    "-", a name nobody configured) is refused with the names the user has.
    """
    agents = known_agents(settings)
    name = settings.agent if requested is None else requested
    if isinstance(name, str) and name in agents and AGENT_NAME.fullmatch(name):
        return agents[name]
    source = "the config's `agent`" if requested is None else "agent"
    prefix = f"{where}: " if where else ""
    raise AgentdocError(
        f"{prefix}{source} {_shown(name)} is not an agent's name; known agents: "
        f"{', '.join(agents)} (add others as [agents.NAME] in your agentdoc config)"
    )


def _shown(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."
