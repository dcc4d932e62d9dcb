"""The config read again while the daemon runs: what changed, what waits for a restart, and
an invalid edit that changes nothing."""

from __future__ import annotations

from pathlib import Path

from agentdoc.config import Settings, load_settings
from agentdoc.daemon.reconfig import ConfigWatch, changed_keys, needing_restart


def load(path: Path) -> Settings:
    return load_settings(path=path, environ={})


def test_a_saved_config_is_read_once_and_an_invalid_one_keeps_the_last_good(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("max_turns_per_hour = 1\n")
    watch = ConfigWatch(config, load, load(config))
    first = watch.look()  # the file as it is when the daemon starts: nothing new in it
    assert first is not None and first.changed == []
    assert watch.look() is None  # nothing saved since
    config.write_text("max_turns_per_hour = 5\ngit_sync_interval = 7\n")
    reread = watch.look()
    assert reread is not None and reread.settings is not None
    assert set(reread.changed) == {"git_sync_interval", "max_turns_per_hour"}
    assert watch.look() is None
    config.write_text("max_turns_per_hour = 'many'\n")
    refused = watch.look()
    assert refused is not None and refused.settings is None
    assert refused.problem is not None and "max_turns_per_hour" in refused.problem
    assert watch.current.max_turns_per_hour == 5  # the last good settings


def test_only_what_the_watch_fixed_at_start_waits_for_a_restart() -> None:
    started = Settings(warm_sessions=0)
    assert needing_restart(started, Settings(warm_sessions=0, notify=("x",))) == []
    assert needing_restart(started, Settings(warm_sessions=2, settle_step=1.0)) == [
        "settle_step",
        "warm_sessions",
    ]
    assert needing_restart(Settings(warm_sessions=4), Settings(warm_sessions=0)) == []
    assert changed_keys(started, Settings(warm_sessions=0, notify=("x",))) == ["notify"]
