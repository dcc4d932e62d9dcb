"""Fixtures of the agent-process tests: the scripted fake ACP agent, started and closed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.acp import Agent


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Callable[..., Agent]]:
    made: list[Agent] = []

    def make(script: dict[str, Any], start: bool = True, **options: Any) -> Agent:
        made.append(Agent(tmp_path, script, **options))
        if start:
            made[-1].process.start()
        return made[-1]

    yield make
    for item in made:
        item.process.close(grace=1.0)
