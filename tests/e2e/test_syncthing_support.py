"""The Syncthing harness itself: two real instances on loopback keep a folder in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.config import Settings
from agentdoc.daemon.synced.pace import SyncedFolder, synced_folder
from tests.support.syncthing import Syncthing, needs_syncthing, syncthing_pair, wait_in_sync
from tests.support.waiting import wait_for

__all__ = ["syncthing_pair"]  # the fixture, used by name below

pytestmark = [pytest.mark.e2e, needs_syncthing]


def test_a_save_on_either_side_arrives_on_the_other(
    syncthing_pair: tuple[Syncthing, Syncthing, Path, Path],
) -> None:
    phone, server, phone_dir, server_dir = syncthing_pair
    (phone_dir / "chat.md").write_text("# from the phone\n")
    wait_for(lambda: _text(server_dir / "chat.md") == "# from the phone\n", "phone → server", 30)
    (server_dir / "chat.md").write_text("# from the phone\n\nanswered\n")
    wait_for(lambda: "answered" in _text(phone_dir / "chat.md"), "server → phone", 30)
    wait_in_sync([phone, server])
    assert phone.completion(server)["completion"] == 100


def test_each_instance_stays_on_loopback_and_is_seen_as_a_synced_folder(
    syncthing_pair: tuple[Syncthing, Syncthing, Path, Path],
) -> None:
    phone, server, _, server_dir = syncthing_pair
    for instance in (phone, server):
        options = instance.rest("GET", "/rest/config/options")
        assert options["listenAddresses"] == [instance.address]
        assert not options["globalAnnounceEnabled"]
        assert not options["localAnnounceEnabled"]
        assert not options["relaysEnabled"]
        assert not options["natEnabled"]
        assert options["urAccepted"] == -1
        assert not options["crashReportingEnabled"]
        assert options["autoUpgradeIntervalH"] == 0
    # Syncthing's own marker is what agentdoc recognises the folder by.
    assert synced_folder(server_dir, Settings()) == SyncedFolder(server_dir, "syncthing")


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""
