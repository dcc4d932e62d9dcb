"""Thinking through the real CLI: a signature-only block, and `thinking_display` in the request."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.agents.claude.version import THINKING_DISPLAY_SINCE, cli_version
from agentdoc.config import Settings
from agentdoc.document import parser as document
from agentdoc.document.thinking import OMITTED
from tests.support.claude_cli import one_turn, require_claude

pytestmark = pytest.mark.e2e

DOC = """---
agentdoc: {}
---

## User

Why is the sky blue?
"""
# What the newest models send unless asked for the text: the block's signature, no thinking.
SIGNATURE_ONLY = [
    {"type": "thinking", "thinking": "", "signature": "EqQBCkgIBxABGAIqQOpaque"},
    {"type": "text", "text": "Rayleigh scattering."},
]


def test_signature_only_thinking_is_said_to_be_omitted(tmp_path: Path) -> None:
    doc = tmp_path / "sky.md"
    doc.write_text(DOC)
    settings = Settings(claude=str(require_claude()), flush_interval=0.05)
    outcome, _api = one_turn(doc, settings, tmp_path / "home", [SIGNATURE_ONLY])
    assert outcome.state == "done"
    sidecar = (tmp_path / "sky.thinking.md").read_text()
    turn = sidecar[sidecar.index('<a id="turn-1"></a>') :]
    assert OMITTED in turn
    reply = document.parse(doc.read_text()).turns[1].content
    assert "Rayleigh scattering." in reply and "sky.thinking.md#turn-1" in reply


@pytest.mark.parametrize("display", ["summarized", "omitted", "highlights"])
def test_thinking_display_reaches_the_request_on_a_cli_that_knows_it(
    tmp_path: Path, display: str
) -> None:
    claude = str(require_claude())
    version = cli_version(claude)
    assert version is not None, f"{claude} --version"
    doc = tmp_path / "sky.md"
    doc.write_text(DOC)
    settings = Settings(claude=claude, flush_interval=0.05, thinking_display=display)
    outcome, api = one_turn(doc, settings, tmp_path / "home", [SIGNATURE_ONLY])
    [request] = api.requests
    assert outcome.state == "done"
    sent = (request.body.get("thinking") or {}).get("display")
    if version >= THINKING_DISPLAY_SINCE[display]:
        # 2.1.330 sends its own default, `updates`, in place of `omitted`.
        assert sent in (("omitted", "updates") if display == "omitted" else (display,))
    else:  # an older CLI runs unchanged: its own default, and no refused flag
        assert sent != display
