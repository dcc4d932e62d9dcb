"""Long file names: one-line errors for names the system refuses, state files that always fit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentdoc.cli import main
from agentdoc.document import fitting_name, sidecar_path
from agentdoc.records import read_status, request_cancel
from agentdoc.records.status import cancel_path, status_path
from tests.support.fake_claude import FakeClaude, install_as_claude


def test_new_with_a_name_too_long_for_the_filesystem_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / ("a" * 300 + ".md")
    assert main(["new", str(path)]) == 1
    err = capsys.readouterr().err
    assert "File name too long" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "suffix"),
    [
        ("chat.md", ".status.json"),
        ("b" * 252 + ".md", ".status.json"),
        ("b" * 252 + ".md", ".cancel"),
        ("日本語" * 28 + ".md", ".journal.jsonl"),  # 252 bytes of three-byte characters
        ("x" * 255, ".thinking.md"),
    ],
)
def test_a_state_file_name_always_fits_and_stays_unique(name: str, suffix: str) -> None:
    fitted = fitting_name(name, suffix)
    assert len(os.fsencode(fitted)) <= 255
    assert fitted.endswith(suffix)
    if len(os.fsencode(name + suffix)) <= 255:
        assert fitted == name + suffix
    else:
        assert fitting_name(name[:-4] + "X.md", suffix) != fitted


def test_a_document_with_a_255_byte_name_runs_with_its_state_files(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plain_claude: FakeClaude,
) -> None:
    doc = tmp_path / ("b" * 252 + ".md")
    assert main(["new", str(doc)]) == 0
    with doc.open("a") as f:
        f.write("Hello?\n")
    install_as_claude(plain_claude, monkeypatch)
    assert main(["run", str(doc)]) == 0, capsys.readouterr().err
    assert "## Assistant" in doc.read_text()
    assert status_path(doc).exists()
    current = read_status(doc)
    assert current is not None and current.state == "idle" and current.document == doc.name
    assert sidecar_path(doc).parent == tmp_path
    # A cancel request by file lands where agentdoc looks for it.
    assert request_cancel(doc) == cancel_path(doc)
    assert main(["status", str(doc), "--json"]) == 0
