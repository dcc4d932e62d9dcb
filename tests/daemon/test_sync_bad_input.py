"""Bad input around synced folders: told in agentdoc's words, nothing lost, the daemon serves on."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.config import config_path
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.synced.claims import CLAIMS
from tests.support.daemon import DOC, Running, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


@pytest.fixture
def synced(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    (folder / ".stfolder").mkdir(parents=True)  # Syncthing's marker
    (folder / "chat.md").write_text(DOC)
    return folder


def daemon(folder: Path, fake: FakeClaude) -> Daemon:
    settings = fake.settings(settle_step=0.1, settle_max=1.0, claim_wait=0)
    return Daemon([folder], settings, environ=fake.env, rescan_interval=0.5)


def trust(*folders: Path) -> None:
    listed = ", ".join(f'"{f}"' for f in folders)
    config_path().write_text(f"trusted = [{listed}]\n")


def answered(doc: Path, fake: FakeClaude) -> None:
    """A prompt saved now is answered: the daemon still serves."""
    doc.write_text(DOC + "still there?\n")
    wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    assert [c["stdin"] for c in fake.calls()] == ["still there?"]


def test_a_claim_file_of_garbage_is_told_kept_and_counts_for_no_machine(
    synced: Path, caplog: pytest.LogCaptureFixture, plain_claude: FakeClaude
) -> None:
    trust(synced)
    garbage = synced / CLAIMS / "chat.md.0123456789abcdef.json"
    garbage.parent.mkdir()
    garbage.write_bytes(b"\x00\xffnot json{")
    with caplog.at_level(logging.WARNING), Running(daemon(synced, plain_claude)):
        answered(synced / "chat.md", plain_claude)
    assert garbage.read_bytes() == b"\x00\xffnot json{"
    told = [r.getMessage() for r in caplog.records if "not a readable claim" in r.getMessage()]
    assert len(told) == 1 and str(garbage) in told[0] and "agentdoc adopt" in told[0]


def test_a_stignore_that_is_not_text_is_told_and_left_as_it_is(
    synced: Path, plain_claude: FakeClaude
) -> None:
    stignore = synced / ".stignore"
    stignore.write_bytes(b"(?d).DS_Store\n\xff\xfe broken\n")
    result = CliRunner().invoke(cli, ["init-sync", str(synced)])
    assert result.exit_code == 1
    assert "is not UTF-8 text" in result.output and ".agentdoc" in result.output
    assert "Traceback" not in result.output
    assert stignore.read_bytes() == b"(?d).DS_Store\n\xff\xfe broken\n"
    # The daemon never needs the ignore file: its own state is out of the folder anyway.
    trust(synced)
    with Running(daemon(synced, plain_claude)):
        answered(synced / "chat.md", plain_claude)
    assert not (synced / ".agentdoc").exists()


def test_a_trusted_folder_that_is_gone_is_told_and_the_others_still_served(
    synced: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, plain_claude: FakeClaude
) -> None:
    gone = tmp_path / "was-here"
    trust(gone, synced)
    listed = CliRunner().invoke(cli, ["trust", "--list"])
    assert listed.exit_code == 0
    assert f"{gone} (no longer exists)" in listed.output and f"{synced}\n" in listed.output
    with caplog.at_level(logging.WARNING), Running(daemon(synced, plain_claude)):
        answered(synced / "chat.md", plain_claude)
    told = [r.getMessage() for r in caplog.records if "no longer exists" in r.getMessage()]
    assert len(told) == 1 and f"agentdoc trust --remove {gone}" in told[0]
    assert str(gone) in config_path().read_text()  # kept: the person decides
