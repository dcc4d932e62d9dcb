"""Platform limits said up front, and a start-up that does not pay for drawing."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli


def test_windows_is_refused_with_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "win32")
    result = CliRunner().invoke(cli, ["status"], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.output.startswith("Error: agentdoc runs on Linux and macOS")
    assert "WSL" in result.output
    # Help still works, so the user can read what the tool is.
    assert CliRunner().invoke(cli, ["--help"], catch_exceptions=False).exit_code == 0


def test_help_does_not_import_rich() -> None:
    code = (
        "import sys; from agentdoc.cli import main; "
        "sys.argv = ['agentdoc', '--help']; "
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])\n"
        "print('rich' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
