"""Out of inotify watches, the daemon polls instead of missing saves, and says so.

The refusal is injected where the kernel gives it: `inotify_add_watch` returning -1 with
ENOSPC, for a folder below the watched one (which watchdog skips without a word) or for the
watched folder itself (which watchdog raises).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.daemon import Daemon, find_daemon
from agentdoc.daemon.watch.watcher import DOUBLE_WATCH_WARNING
from tests.support.daemon import DOC, Running, make_daemon, refuse_watches, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

pytestmark = pytest.mark.filterwarnings(f"ignore:{DOUBLE_WATCH_WARNING}:RuntimeWarning")


@pytest.mark.parametrize("refused", ["sub", "."])
def test_out_of_watches_a_saved_prompt_is_still_answered(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    refused: str,
    plain_claude: FakeClaude,
) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    doc = folder / "sub" / "chat.md"
    doc.write_text(DOC)
    refuse_watches(monkeypatch, (folder / refused).resolve())
    settings = plain_claude.settings(settle_step=0.1, settle_max=1.0)
    # No safety rescan: only the watch (or the polling that replaces it) can see the save.
    daemon = Daemon([folder], settings, environ=plain_claude.env, rescan_interval=0)
    with Running(daemon, discovered=True):
        doc.write_text(DOC + "a prompt\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
        holder = find_daemon(folder)
        assert holder is not None and holder.polling is not None
        assert "`sudo sysctl fs.inotify.max_user_watches=524288`" in holder.polling
        shown = CliRunner().invoke(cli, ["status", str(folder)], catch_exceptions=False)
        assert f"polling: {holder.polling}" in shown.output
        as_json = CliRunner().invoke(cli, ["status", "--json", str(folder)])
        assert json.loads(as_json.output)["daemon"]["polling"] == holder.polling
    warned = [r for r in caplog.records if "inotify watch limit" in r.getMessage()]
    assert len(warned) == 1, "said once"


def test_with_watches_to_spare_status_says_nothing_of_polling(
    fake_claude: Callable[..., FakeClaude], folder: Path
) -> None:
    daemon = make_daemon(folder, fake_claude("plain_text.ndjson"))
    with Running(daemon, discovered=True):
        shown = CliRunner().invoke(cli, ["status", str(folder)], catch_exceptions=False)
        assert shown.output.startswith("daemon: pid ")
        assert "polling" not in shown.output
