"""Running `agentdoc watch` as a real process for tests: start, wait until ready, signal, stop.

The daemon runs in its own session (so a test can signal its whole process group, as a
terminal's Ctrl-C or a service manager would), logs at INFO level to a file, and is always
killed on the way out of the context manager, whatever the test did to it. The `/proc` helpers
find the processes the daemon started, so a test can check they are gone after a stop.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

from agentdoc.daemon import lock
from agentdoc.document import parser as document
from agentdoc.records import status
from tests.support.paths import REPO_ROOT
from tests.support.waiting import wait_for

READY_LINE = "start-up done: "
CLI = (sys.executable, "-m", "agentdoc.cli")


def config_text(**settings: object) -> str:
    """A user config (TOML) with the given top-level settings, one a line."""
    return "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())


def write_config(path: Path, **settings: float | str | bool) -> Path:
    """A user config file (TOML) with the given top-level settings."""
    path.write_text(config_text(**settings), encoding="utf-8")
    return path


# Settles and flushes quick enough for a test, slow enough for a loaded machine.
QUICK_SETTINGS: dict[str, float | str | bool] = {
    "settle_step": 0.1,
    "settle_max": 1.0,
    "flush_interval": 0.05,
}


# QUICK_SETTINGS with a CLI per turn: no warm CLI outlives a turn.
COLD_SETTINGS: dict[str, float | str | bool] = QUICK_SETTINGS | {"warm_sessions": 0}


def write_quick_config(path: Path, **settings: float | str | bool) -> Path:
    """A user config file with QUICK_SETTINGS, and `settings` beside or over them."""
    return write_config(path, **(QUICK_SETTINGS | settings))


def run_cli(
    args: Sequence[str], env: Mapping[str, str], timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """One `agentdoc ...` command as its own process; output captured as text."""
    return subprocess.run(
        [*CLI, *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def roles(path: Path) -> list[str]:
    return [t.role for t in document.parse(path.read_text(encoding="utf-8")).turns]


def state_of(path: Path) -> str | None:
    found = status.read_status(path)
    return found.state if found is not None else None


def held_reason(path: Path) -> str:
    """Why the daemon holds the document's prompt, as its status says; empty when it holds none."""
    found = status.read_status(path)
    return found.held or "" if found is not None else ""


# -- processes -----------------------------------------------------------------------------


def alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The state letter follows the command name, which is in parentheses and may hold spaces.
    return stat.rpartition(")")[2].split()[0] != "Z"


def group_exists(pgid: int) -> bool:
    """True while any process is left in process group `pgid`."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now has that group id
        return True
    return True


def children(pid: int) -> list[int]:
    """Direct children of `pid`, from every thread's `children` list (Linux /proc)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            found.extend(int(p) for p in (task / "children").read_text().split())
    return sorted(set(found))


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    todo = children(pid)
    while todo:
        child = todo.pop()
        out.append(child)
        todo.extend(children(child))
    return sorted(out)


def processes_with_env(key: str, value: str) -> list[int]:
    """Our processes whose environment has `key=value`: finds children that outlived a parent.

    A child reparented after its parent was killed no longer shows up under it; a marker
    variable unique to one test finds it anyway.
    """
    needle = f"{key}={value}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0") and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def command_lines(pids: Sequence[int]) -> dict[int, bytes]:
    """The raw command lines of those of `pids` still running: a process listed a moment ago
    (an agent's short-lived helper) may have ended by the time it is read."""
    found = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
    return found


def kill_all(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# -- the daemon ----------------------------------------------------------------------------


@dataclass
class WatchProcess:
    """A running `agentdoc -v watch ROOT ...`; its stderr (with the log) goes to a file."""

    proc: subprocess.Popen[bytes]
    root: Path
    log_path: Path
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def holds_lock(self) -> bool:
        with as_machine(self.env):
            holder = lock.find_daemon(self.root)
        return holder is not None and holder.pid == self.pid

    def is_ready(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(
                f"agentdoc watch exited early with {self.proc.returncode}:\n{self.log()}"
            )
        # The lock is taken first; this log line comes after the first walk of the tree, with
        # start-up recovery and discovery (saves are served before it, while the walk goes on).
        return self.holds_lock() and READY_LINE in self.log()

    def wait_ready(self, timeout: float = 20.0) -> WatchProcess:
        wait_for(self.is_ready, "agentdoc watch to be ready", timeout)
        return self

    def send(self, sig: signal.Signals, *, group: bool = False) -> None:
        if group:
            os.killpg(self.pid, sig)
        else:
            os.kill(self.pid, sig)

    def wait(self, timeout: float = 15.0) -> int:
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL the daemon's process group (not its claude children: they have their own)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        self.proc.wait(10)


def start_watch(
    root: Path,
    env: Mapping[str, str],
    log_path: Path,
    extra: Sequence[str] = (),
) -> WatchProcess:
    """Start `agentdoc watch ROOT` in a new session, stdout and stderr into `log_path`."""
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            [*CLI, "-v", "watch", *extra, str(root)],
            env=dict(env),
            cwd=root,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    return WatchProcess(proc, root, log_path, env)


@contextlib.contextmanager
def as_machine(env: Mapping[str, str]) -> Iterator[None]:
    """Look at a synced folder as the machine whose environment is `env` does: its own state
    (status, lock) lives in that machine's state folder, not in the tree."""
    own = {key: env[key] for key in ("AGENTDOC_STATE_DIR", "AGENTDOC_CONFIG") if key in env}
    with mock.patch.dict(os.environ, own):
        yield


@contextlib.contextmanager
def watching(
    root: Path,
    env: Mapping[str, str],
    log_path: Path,
    extra: Sequence[str] = (),
    *,
    ready_timeout: float = 20.0,
) -> Iterator[WatchProcess]:
    """A ready daemon for the `with` block; killed afterwards if the test left it running."""
    daemon = start_watch(root, env, log_path, extra)
    try:
        yield daemon.wait_ready(ready_timeout)
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()


def status_json(root: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """`agentdoc status --json ROOT`, parsed."""
    result = run_cli(["status", "--json", str(root)], env)
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def base_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment for the daemon, built from scratch (no developer settings leak)."""
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "LANG": "C.UTF-8"}
    # `python -m agentdoc.cli` runs this checkout, not another installed copy.
    env["PYTHONPATH"] = str(REPO_ROOT)
    env.update(extra)
    return env
