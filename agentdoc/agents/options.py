"""What a document's agent is set to, as `agentdoc status` tells it: the agent, the model and
effort the document (or config) asks for, the user's permission_mode as the agent's own mode,
and what the agent offers, all known without starting it (`Agent.known`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from agentdoc.agents.base.offers import Offer
from agentdoc.agents.registry import AgentSpec
from agentdoc.config import Settings
from agentdoc.errors import AgentdocError


@dataclass(frozen=True, slots=True)
class SessionOptions:
    agent: str
    model: str | None  # None: the agent's default
    effort: str | None
    policy: str  # the user's permission_mode (from the config, never a document)
    mode: str | None  # the policy as the agent's own mode or setting; None: not known yet
    offered: dict[str, list[str]] | None  # what the agent offers; None: not known yet
    seen: str | None = None  # when the agent said what it offers
    note: str | None = None

    def brief(self) -> str:
        """A few words for the tree listing."""
        parts = [f"model {self.model}"] if self.model else []
        parts += [f"effort {self.effort}"] if self.effort else []
        parts.append(f"{self.policy} → {self.mode or '?'}")
        return f"{self.agent} ({', '.join(parts)})"

    def lines(self) -> list[str]:
        """Line by line, for one document."""
        mode = self.mode or "not known yet"
        default = "the agent's default"
        found = [
            f"  agent: {self.agent}",
            f"  model: {self.model or default}",
            f"  effort: {self.effort or default}",
            f"  permission_mode: {self.policy} → {mode}",
        ]
        if self.offered is not None:
            seen = f" (as it said on {self.seen})" if self.seen else ""
            found.append(f"  it offers{seen}: {Offer(self.offered).describe()}")
        if self.note:
            found.append(f"  note: {self.note}")
        return found

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def session_options(
    spec: AgentSpec,
    settings: Settings,
    model: str | None,
    effort: str | None,
    environ: Mapping[str, str] | None = None,
) -> SessionOptions:
    """The options a turn of ``spec`` would resolve to (``model``/``effort``: the document's,
    else the config's); reads what this machine remembers, never starts the agent."""
    settings = spec.settings(settings)  # its entry's own permission_mode, where it has one
    policy = settings.permission_mode or "default"
    try:
        known = spec.agent.known(spec.name, spec.command, settings.permission_mode, environ)
    except AgentdocError as exc:  # a record that cannot be read only loses the hint
        known = None
        note: str | None = str(exc)
    return SessionOptions(
        agent=spec.name,
        model=model or settings.model,
        effort=effort or settings.effort,
        policy=policy,
        mode=known.mode if known else None,
        offered=known.offered if known else None,
        seen=known.seen if known else None,
        note=known.note if known else note,
    )
