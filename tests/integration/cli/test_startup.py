"""The quick commands load only what they use, so they answer without a noticeable pause."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "markdown_it",
    "ruamel.yaml",
    "watchdog",
    "agentdoc.document.parser",
    "agentdoc.agents.claude",
)

PROBE = """
import json, sys
from agentdoc.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


def loaded_by(args: list[str], cwd: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=cwd, check=False
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["status"], ["stop"]])
def test_quick_commands_do_not_load_the_parser_or_the_watcher(
    args: list[str], tmp_path: Path
) -> None:
    modules = loaded_by(args, str(tmp_path))
    assert [m for m in HEAVY if m in modules] == []


def test_help_loads_no_logging(tmp_path: Path) -> None:
    # --help is measured against a bare interpreter (benchmarks/): the log set-up of -v is
    # not loaded to print it.
    assert "logging" not in loaded_by(["--help"], str(tmp_path))
