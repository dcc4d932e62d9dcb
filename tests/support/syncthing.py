"""Real Syncthing instances for the synced-folder tests, kept on this machine's loopback.

Each instance has its own HOME and config folder, listens for peers and for its REST API on
127.0.0.1 ports of its own, and has discovery (global and local), relays, NAT traversal,
usage and crash reporting and upgrades switched off, so nothing leaves the machine. Peers are
paired and folders shared through the REST API, with the file-system watcher on and a 1 s
delay (the fastest Syncthing allows), so a save travels in a few seconds.

    with syncthing_cluster(tmp_path, "phone", "server") as (phone, server):
        share(PHONE_DIR, SERVER_DIR, phone, server)  # folder "notes", one path per instance
        ...
        wait_in_sync([phone, server])

Nothing here sleeps for a fixed time: every wait polls with a deadline. The instances are
stopped by the context manager (the `syncthing_pair` fixture uses it), whatever the test did.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

SYNCTHING = shutil.which("syncthing")
needs_syncthing = pytest.mark.skipif(
    SYNCTHING is None, reason="syncthing is not installed (Debian package `syncthing`)"
)
FOLDER_ID = "notes"
START_TIMEOUT = 30.0
# Options that keep an instance on loopback and quiet: no discovery, relays, NAT, reporting
# or upgrades; `-1` for usage reporting means "declined", so it never asks either.
QUIET_OPTIONS = {
    "globalAnnounceEnabled": "false",
    "localAnnounceEnabled": "false",
    "relaysEnabled": "false",
    "natEnabled": "false",
    "urAccepted": "-1",
    "crashReportingEnabled": "false",
    "autoUpgradeIntervalH": "0",
    "startBrowser": "false",
    "stunServer": "",
    "announceLANAddresses": "false",
    "setLowPriority": "false",
    # A quick reconnect after a peer restarts, instead of one minute.
    "reconnectionIntervalS": "1",
}


def poll(predicate: Callable[[], bool], what: str, timeout: float) -> None:
    """Poll until `predicate` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Syncthing:
    """One running instance and what a test needs to talk to it."""

    name: str
    home: Path
    api_key: str
    gui_port: int
    listen_port: int
    device_id: str
    process: subprocess.Popen[bytes] | None = None
    folders: dict[str, Path] = field(default_factory=dict)  # folder id -> path

    @property
    def log(self) -> Path:
        return self.home / "syncthing.log"

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.listen_port}"

    def rest(self, method: str, path: str, body: Any = None) -> Any:
        """Call the REST API; the decoded JSON answer (None when it is empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.gui_port}{path}",
            data=data,
            method=method,
            headers={"X-API-Key": self.api_key, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
        return json.loads(raw) if raw.strip() else None

    def answering(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"syncthing {self.name} exited: {self.tail()}")
        try:
            self.rest("GET", "/rest/system/ping")
        except (OSError, urllib.error.URLError):
            return False
        return True

    def connected_to(self, other: Syncthing) -> bool:
        connections = self.rest("GET", "/rest/system/connections")["connections"]
        return bool(connections.get(other.device_id, {}).get("connected"))

    def folder_status(self, folder_id: str = FOLDER_ID) -> dict[str, Any]:
        status: dict[str, Any] = self.rest("GET", f"/rest/db/status?folder={folder_id}")
        return status

    def completion(self, other: Syncthing, folder_id: str = FOLDER_ID) -> dict[str, Any]:
        """How far `other` has what this instance has of the folder (Syncthing's own view)."""
        done: dict[str, Any] = self.rest(
            "GET", f"/rest/db/completion?folder={folder_id}&device={other.device_id}"
        )
        return done

    def scan(self, folder_id: str = FOLDER_ID) -> None:
        """Ask for a scan now (the watcher would see the change within its delay anyway)."""
        self.rest("POST", f"/rest/db/scan?folder={folder_id}")

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Ask the instance to exit, then make sure it has (SIGTERM, then SIGKILL)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _configure(config: Path, gui_port: int, listen_port: int, api_key: str, name: str) -> None:
    tree = ET.parse(config)
    root = tree.getroot()
    gui = root.find("gui")
    assert gui is not None
    gui.set("tls", "false")
    _set(gui, "address", f"127.0.0.1:{gui_port}")
    _set(gui, "apikey", api_key)
    options = root.find("options")
    assert options is not None
    for key, value in QUIET_OPTIONS.items():
        _set(options, key, value)
    _set(options, "listenAddress", f"tcp://127.0.0.1:{listen_port}")
    for device in root.findall("device"):
        device.set("name", name)
    tree.write(config)


def _set(parent: ET.Element, tag: str, text: str) -> None:
    element = parent.find(tag)
    if element is None:
        element = ET.SubElement(parent, tag)
    element.text = text


def _environment(home: Path) -> dict[str, str]:
    # Built from scratch: the instance never sees the developer's own Syncthing or proxy.
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "STNODEFAULTFOLDER": "1",
        "STNOUPGRADE": "1",
        "STNORESTART": "1",
        "STMONITORED": "1",  # no monitor process: the pid we hold is Syncthing itself
    }


def create(base: Path, name: str) -> Syncthing:
    """Generate an instance's keys and config under `base/name` (not started yet)."""
    assert SYNCTHING is not None
    home = base / name
    home.mkdir(parents=True)
    made = subprocess.run(
        [SYNCTHING, "generate", f"--home={home}", "--no-default-folder", "--skip-port-probing"],
        env=_environment(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    device_id = next(
        line.split("Device ID:", 1)[1].strip()
        for line in made.stdout.splitlines() + made.stderr.splitlines()
        if "Device ID:" in line
    )
    instance = Syncthing(name, home, secrets.token_hex(16), free_port(), free_port(), device_id)
    _configure(home / "config.xml", instance.gui_port, instance.listen_port, instance.api_key, name)
    return instance


def start(instance: Syncthing) -> Syncthing:
    assert SYNCTHING is not None
    with instance.log.open("ab") as log:
        instance.process = subprocess.Popen(
            [
                SYNCTHING,
                "serve",
                f"--home={instance.home}",
                "--no-browser",
                "--no-restart",
                "--no-upgrade",
                f"--logfile={instance.log}",
            ],
            env=_environment(instance.home),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    poll(instance.answering, f"syncthing {instance.name} to answer", START_TIMEOUT)
    return instance


def pair(instances: Sequence[Syncthing]) -> None:
    """Make every instance know every other by device id and loopback address."""
    for one in instances:
        for other in instances:
            if other is not one:
                one.rest(
                    "POST",
                    "/rest/config/devices",
                    {
                        "deviceID": other.device_id,
                        "name": other.name,
                        "addresses": [other.address],
                        "autoAcceptFolders": False,
                    },
                )
    for one in instances:
        for other in instances:
            if other is not one:
                poll(
                    lambda one=one, other=other: one.connected_to(other),  # type: ignore[misc]
                    f"{one.name} to connect to {other.name}",
                    START_TIMEOUT,
                )


def share(
    paths: Sequence[Path], instances: Sequence[Syncthing], folder_id: str = FOLDER_ID
) -> None:
    """Share one folder among `instances`, at `paths[i]` on instance i (each path is created)."""
    devices = [{"deviceID": i.device_id} for i in instances]
    for path, instance in zip(paths, instances, strict=True):
        path.mkdir(parents=True, exist_ok=True)
        instance.rest(
            "POST",
            "/rest/config/folders",
            {
                "id": folder_id,
                "label": folder_id,
                "path": str(path),
                "type": "sendreceive",
                "devices": devices,
                "fsWatcherEnabled": True,
                "fsWatcherDelayS": 1,
                "rescanIntervalS": 3600,
            },
        )
        instance.folders[folder_id] = path
    for instance in instances:
        poll(
            lambda instance=instance: _folder_ready(instance, folder_id),  # type: ignore[misc]
            f"folder {folder_id} to start on {instance.name}",
            START_TIMEOUT,
        )


def _folder_ready(instance: Syncthing, folder_id: str) -> bool:
    try:
        state = instance.folder_status(folder_id).get("state")
    except urllib.error.HTTPError:
        return False  # not known yet
    return state in {"idle", "syncing", "scanning", "sync-preparing"}


def in_sync(instances: Sequence[Syncthing], folder_id: str = FOLDER_ID) -> bool:
    """True when every instance is idle with nothing to pull and each has all of the others'."""
    for instance in instances:
        status = instance.folder_status(folder_id)
        if status.get("state") != "idle" or status.get("needTotalItems", 0):
            return False
        for other in instances:
            if other is instance:
                continue
            done = instance.completion(other, folder_id)
            if done.get("completion") != 100 or done.get("needItems", 0):
                return False
    # Everyone agrees on the same global version of the folder.
    return len({i.folder_status(folder_id).get("globalFiles") for i in instances}) == 1


def wait_in_sync(
    instances: Sequence[Syncthing], folder_id: str = FOLDER_ID, timeout: float = 30.0
) -> None:
    """Scan everywhere, then wait until the folder is the same everywhere."""
    for instance in instances:
        instance.scan(folder_id)
    names = ", ".join(i.name for i in instances)
    poll(lambda: in_sync(instances, folder_id), f"{folder_id} in sync on {names}", timeout)


@contextmanager
def syncthing_cluster(base: Path, *names: str) -> Iterator[list[Syncthing]]:
    """Started, paired instances named `names` under `base`; all stopped on the way out."""
    if SYNCTHING is None:
        pytest.skip("syncthing is not installed (Debian package `syncthing`)")
    with ExitStack() as stack:
        instances: list[Syncthing] = []
        for name in names:
            instance = create(base, name)
            stack.callback(instance.stop)
            instances.append(start(instance))
        pair(instances)
        yield instances


@pytest.fixture
def syncthing_pair(tmp_path: Path) -> Iterator[tuple[Syncthing, Syncthing, Path, Path]]:
    """A "phone" and a "server" instance sharing folder `notes`: (phone, server, their dirs)."""
    with syncthing_cluster(tmp_path / "syncthing", "phone", "server") as (phone, server):
        phone_dir, server_dir = tmp_path / "phone" / "notes", tmp_path / "server" / "notes"
        share([phone_dir, server_dir], [phone, server])
        yield phone, server, phone_dir, server_dir
