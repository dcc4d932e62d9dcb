"""The quick commands load only what they use, so they answer without a noticeable pause."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.fake_claude import FakeClaude

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


def loaded_by(args: list[str], cwd: str, env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["status"], ["stop"]])
def test_quick_commands_do_not_load_the_parser_or_the_watcher(
    args: list[str], tmp_path: Path
) -> None:
    modules = loaded_by(args, str(tmp_path))
    assert [m for m in HEAVY if m in modules] == []


def test_help_loads_no_logging_and_no_table_of_sync_tools(tmp_path: Path) -> None:
    # --help is measured against a bare interpreter (benchmarks/): the log set-up of -v is
    # not loaded to print it, nor the sync tools `init-sync --tool` takes, nor shutil (and
    # its compression modules) for the terminal's width.
    modules = loaded_by(["--help"], str(tmp_path))
    assert [m for m in ("logging", "agentdoc.synctools", "shutil") if m in modules] == []


@pytest.mark.parametrize("args", [["--help"], ["watch", "--help"]])
def test_help_is_laid_out_for_the_terminals_width(args: list[str], tmp_path: Path) -> None:
    def widest(columns: str) -> int:
        shown = subprocess.run(
            [sys.executable, "-m", "agentdoc", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=True,
            env={**os.environ, "COLUMNS": columns},
        ).stdout
        # The examples keep their lines (click does not rewrap them); the rest is wrapped.
        return max(len(line) for line in shown.splitlines() if "agentdoc " not in line)

    assert widest("50") <= 50 < widest("100")


def test_init_sync_still_shows_and_takes_the_sync_tools(tmp_path: Path) -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "agentdoc", "init-sync", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=True,
    ).stdout
    assert "[syncthing|nextcloud|dropbox|rclone|unison|git]" in " ".join(shown.split())
    assert "rclone and unison leave no mark" in " ".join(shown.split())
    wrong = subprocess.run(
        [sys.executable, "-m", "agentdoc", "init-sync", "--tool", "dropbox2", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert wrong.returncode == 1 and "'dropbox2' is not one of 'syncthing'" in wrong.stderr


def test_a_one_shot_claude_turn_loads_neither_the_other_protocol_nor_the_daemon(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    # `agentdoc run` pays for each module it imports on every turn (benchmarks/: `run/10K`).
    fake = fake_claude("plain_text.ndjson")
    doc = tmp_path / "chat.md"
    doc.write_text("---\nagentdoc: {}\n---\n\n## User\n\nhi there\n", encoding="utf-8")
    modules = loaded_by(
        ["run", "-q", str(doc)],
        str(tmp_path),
        {**fake.env, "AGENTDOC_CLAUDE": str(fake.executable)},
    )
    assert "agentdoc.agents.claude" in modules  # the turn ran
    assert "## Assistant" in doc.read_text(encoding="utf-8")
    unused = ("agentdoc.agents.acp", "agentdoc.daemon.service", "agentdoc.daemon.pool", "watchdog")
    assert [m for m in unused if m in modules] == []
