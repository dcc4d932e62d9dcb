"""The README's install steps and the version table (docs/platforms.md) agree with what the
project pins and tests."""

from __future__ import annotations

import json
import re

from agentdoc.agents.claude.checks import TESTED_MAX, TESTED_MIN
from tests.support.paths import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
PLATFORMS = (REPO_ROOT / "docs" / "platforms.md").read_text(encoding="utf-8")


def section(title: str, text: str = README) -> str:
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def pinned() -> str:
    package = json.loads((REPO_ROOT / "package.json").read_text())
    return str(package["dependencies"]["@anthropic-ai/claude-code"])


def oldest() -> str:
    found = re.search(
        r"^OLDEST_CLAUDE_VERSION := (\S+)$", (REPO_ROOT / "Makefile").read_text(), re.M
    )
    assert found is not None
    return found.group(1)


def test_install_is_from_a_clone_until_the_package_is_published() -> None:
    install = section("Install")
    assert "pipx install ." in install and "uv tool install ." in install
    assert "pipx install agentdoc" not in README
    # After `make demo`: how to run the clone's agentdoc and its pinned claude.
    assert ".venv/bin" in install and "node_modules/.bin" in install


def dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def test_the_pinned_cli_is_the_newest_tested_and_the_one_the_readme_installs() -> None:
    assert pinned() == dotted(TESTED_MAX)
    assert oldest() == dotted(TESTED_MIN)
    assert f"@anthropic-ai/claude-code@{pinned()}" in section("Install")


def test_the_version_table_says_what_was_tested() -> None:
    table = section("Claude Code versions", PLATFORMS)
    rows = {
        line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| 2.")
    }
    assert set(rows) >= {pinned(), oldest()}
    assert "whole suite" in rows[pinned()] and "end-to-end" in rows[oldest()]
