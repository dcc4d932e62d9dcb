"""Fixtures of the end-to-end tests: warm and cold daemons, a folder with a conversation, settings
for the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.config import Settings
from tests.support.claude_cli import require_claude
from tests.support.claude_watch import (
    TITLED_DOC,
)
from tests.support.documents import chat_in


@pytest.fixture(params=[4, 0], ids=["warm", "cold"])
def warm_sessions(request: pytest.FixtureRequest) -> int:
    """Every test here runs with the daemon's warm CLIs and with a CLI per turn."""
    return int(request.param)


@pytest.fixture
def chat_folder(tmp_path: Path) -> Path:
    """A folder holding chat.md, an empty titled conversation, before any daemon starts."""
    return chat_in(tmp_path / "docs", TITLED_DOC).parent


@pytest.fixture
def settings() -> Settings:
    return Settings(claude=str(require_claude()), flush_interval=0.05)
