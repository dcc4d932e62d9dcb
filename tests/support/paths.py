"""Where things are: the checkout, the package, and the tests' own data and stand-in programs."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "agentdoc"
TESTS = REPO_ROOT / "tests"
TRANSCRIPTS = TESTS / "fixtures" / "transcripts"
HOSTILE = TESTS / "hostile"  # the corpus of hostile documents
SCRIPTS = Path(__file__).resolve().parent / "scripts"
FAKE_CLAUDE = SCRIPTS / "fake_claude.py"  # replays a recorded stream-json transcript
FAKE_ACP_AGENT = SCRIPTS / "fake_acp_agent.py"  # a scripted ACP agent
TINY_ACP_AGENT = SCRIPTS / "tiny_acp_agent.py"  # answers the ACP handshake only
