"""Fixtures every tier shares: the folder and document a test starts from, the replaying `claude`
stand-in, and settings that never touch $HOME."""

from __future__ import annotations

import errno
import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from agentdoc.document import fileio
from tests.support import leaks
from tests.support.daemon import DOC
from tests.support.documents import chat_in
from tests.support.fake_claude import FakeClaude, install_as_claude, make_fake_claude

leaks.become_subreaper()

# Started in the background of a non-interactive shell (as a CI job may be), the suite runs with
# SIGINT ignored, and an ignored signal stays ignored across exec: every `agentdoc` a test starts
# would shrug off the Ctrl-C the test sends it (the Ctrl-C tests of `ask` and `logs -f` failed
# so). Python's own handler is reset to the default in each child, as in a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Generated examples are judged on what they find, not on how fast a shared machine produces
# them: the health check for slow generation failed tests whose every example passed.
settings.register_profile("suite", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("suite")


# The unit tier (`make check`) is the folder unit/: modules that test pure logic and start no
# process, no thread and no daemon, so the quick loop stays under a minute. Pure tests that take
# minutes (the property-based fuzzing of the merge) sit in integration/ and run in `make test`.
UNIT_TIER = Path(__file__).parent / "unit"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(UNIT_TIER):
            item.add_marker(pytest.mark.unit)


@pytest.fixture(autouse=True)
def _no_leaks(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves a thread or a child process running (defined first, so this
    check runs after every other function fixture of the test has cleaned up)."""
    threads, children = leaks.snapshot()
    yield
    left = leaks.leaks_after(threads, children)
    if left:
        leaks.kill_leaked(children)  # so the next tests neither pay for nor inherit them
        pytest.fail(f"{request.node.nodeid} left behind: " + "; ".join(left), pytrace=False)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads the developer's own agentdoc config."""
    monkeypatch.setenv("AGENTDOC_CONFIG", str(tmp_path / "agentdoc-config.toml"))
    # Nor writes snapshots into the developer's own state folder.
    monkeypatch.setenv("AGENTDOC_STATE_DIR", str(tmp_path / "agentdoc-state"))


@pytest.fixture
def fake_claude(tmp_path: Path) -> Callable[..., FakeClaude]:
    """Makes the replaying stand-in for `claude`: fake_claude("plain_text.ndjson", gate=...)."""

    def make(transcript: str | None = None, **env: str) -> FakeClaude:
        return make_fake_claude(tmp_path, transcript, **env)

    return make


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    return docs


@pytest.fixture
def doc(folder: Path) -> Path:
    """chat.md in `folder`: an empty conversation, waiting for its first prompt."""
    return chat_in(folder, DOC)


@pytest.fixture
def plain_claude(fake_claude: Callable[..., FakeClaude]) -> FakeClaude:
    """The replaying `claude` stand-in answering every prompt with a short plain reply."""
    return fake_claude("plain_text.ndjson")


@pytest.fixture
def gated_claude(fake_claude: Callable[..., FakeClaude], gate: Path) -> FakeClaude:
    """The stand-in streaming a long reply that stops half-way until the file `gate` exists."""
    return fake_claude("long_stream.ndjson", gate=str(gate), gate_at="300")


@pytest.fixture
def disk_full(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """While this event is set, every write of a document's bytes fails as on a full disk."""
    full = threading.Event()
    real_write_all = fileio._write_all

    def write_all(fd: int, data: bytes) -> None:
        if full.is_set():
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write_all(fd, data)

    monkeypatch.setattr(fileio, "_write_all", write_all)
    return full


@pytest.fixture
def claude_on_path(plain_claude: FakeClaude, monkeypatch: pytest.MonkeyPatch) -> FakeClaude:
    """`plain_claude` as the user's `claude` for whatever this process runs (the CLI in-process)."""
    install_as_claude(plain_claude, monkeypatch)
    return plain_claude


@pytest.fixture
def gate(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "gate"
    yield path
    path.touch()  # never leave a fake claude waiting
