"""`agentdoc watch` as a real process, stopped by a signal while a reply streams.

SIGTERM is how a service manager stops the daemon; SIGINT to its process group is a Ctrl-C in
the terminal. Either way the running turn must stop, its partial reply must be kept and marked
interrupted, and the daemon must leave nothing behind: no `claude` process, no held lock, no
status file that still says "streaming".
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from agentdoc.daemon import lock
from agentdoc.document import parser as document
from agentdoc.records import journal
from tests.support.fake_claude import FakeClaude
from tests.support.processes import (
    alive,
    base_env,
    descendants,
    group_exists,
    processes_with_env,
    state_of,
    watching,
    write_quick_config,
)
from tests.support.waiting import wait_for

DOC = """---
agentdoc: {}
---

# Shutdown

## User

"""
PROMPT = "Tell me a very long story.\n"
SHUTDOWN_TIMEOUT = 15.0
STOP_WITHIN = 5.0  # seconds: SHUTDOWN_GRACE is longer, but a cancelled fake claude exits at once


def daemon_env(tmp_path: Path, fake: FakeClaude) -> dict[str, str]:
    config = write_quick_config(
        tmp_path / "config.toml",
        warm_sessions=0,  # the replaying fake is one-shot; warm mode has its own e2e tests
    )
    return base_env(
        tmp_path / "home",
        **fake.env,
        AGENTDOC_CLAUDE=str(fake.executable),
        AGENTDOC_CONFIG=str(config),
    )


@pytest.mark.serial
@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGTERM", "SIGINT-to-process-group"],
)
def test_a_signal_mid_reply_stops_the_turn_and_the_daemon_cleanly(
    tmp_path: Path,
    gate: Path,
    sig: signal.Signals,
    group: bool,
    folder: Path,
    gated_claude: FakeClaude,
) -> None:
    doc = folder / "story.md"
    doc.write_text(DOC)
    env = daemon_env(tmp_path, gated_claude)
    with watching(folder, env, tmp_path / "watch.log") as daemon:
        doc.write_text(DOC + PROMPT)
        wait_for(lambda: "w10 " in doc.read_text(), what="the reply to stream")
        wait_for(lambda: state_of(doc) == "streaming", what='status "streaming"')
        claude = descendants(daemon.pid)
        assert claude, "the fake claude should be running under the daemon"
        started = time.monotonic()
        daemon.send(sig, group=group)
        code = daemon.wait(SHUTDOWN_TIMEOUT)
        took = time.monotonic() - started
        log = daemon.log()

    assert code == 0, log
    assert took < STOP_WITHIN, f"the daemon took {took:.1f} s to stop"
    assert "agentdoc stopped" in log
    text = doc.read_text(encoding="utf-8")
    parsed = document.parse(text)
    assert [t.role for t in parsed.turns] == ["user", "assistant", "user"]
    assert parsed.turns[0].content.strip() == PROMPT.strip()
    reply = parsed.turns[1].content
    assert "w10 " in reply and "interrupted" in reply
    assert "w1999" not in reply
    assert "agentdoc:reply" not in text and "agentdoc:end" not in text
    assert state_of(doc) == "idle"
    assert lock.find_daemon(folder) is None
    assert not journal.journal_path(doc).exists()
    assert not [pid for pid in claude if alive(pid)], "claude outlived the daemon"
    assert not [pid for pid in claude if group_exists(pid)], "claude's process group is left"
    assert processes_with_env("FAKE_CLAUDE_LOG", str(gated_claude.log)) == []
    assert len(gated_claude.calls()) == 1
