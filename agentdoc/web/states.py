"""What the page says a document is doing, from its status file and the gate (pure)."""

from __future__ import annotations

from dataclasses import dataclass

from agentdoc.records import Status


@dataclass(frozen=True)
class Shown:
    kind: str  # idle, pending, queued, streaming, waiting, held, failed
    words: str  # the line the page shows

    @property
    def busy(self) -> bool:
        """A reply is streaming (or waits for an answer): Cancel applies."""
        return self.kind in ("streaming", "waiting")


def shown(status: Status | None, untrusted: str | None) -> Shown:
    if untrusted is not None:
        return Shown("held", f"held: {untrusted}")
    if status is None:
        return Shown("idle", "idle")
    match status.state:
        case "pending" if status.held:
            return Shown("held", f"held: {status.held}")
        case "waiting":
            return Shown("waiting", f"waiting for an answer: {status.waiting_for or 'a tool'}")
        case "error":
            return Shown("failed", f"failed: {status.error or 'the last turn failed'}")
        case "streaming" if status.queued:
            return Shown("streaming", "streaming (a prompt is queued)")
        case state:
            return Shown(state, state)
