"""Config values that make no sense are refused up front, naming the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.cli import main

DOC = "---\nagentdoc: {}\n---\n\n## User\n\nHello?\n"


@pytest.mark.parametrize(
    ("toml", "key", "reason"),
    [
        ("submit_marker = ''", "submit_marker", "empty"),
        ("submit_marker = '   '", "submit_marker", "empty"),
        ('submit_marker = "/send\\n"', "submit_marker", "one line"),
        ("settle_step = 1e309", "settle_step", "finite"),
        ("settle_step = nan", "settle_step", "finite"),
        ("settle_step = -1", "settle_step", "greater than 0"),
        ("settle_max = 0", "settle_max", "greater than 0"),
        ("settle_max = 1e9", "settle_max", "at most"),
        ("flush_interval = -0.5", "flush_interval", "greater than 0"),
        ("flush_interval = inf", "flush_interval", "finite"),
        ("sync_flush_interval = 0", "sync_flush_interval", "greater than 0"),
        ("stall_timeout = -3", "stall_timeout", "greater than 0"),
        ("stall_timeout = 1e12", "stall_timeout", "at most"),
        ("claude = ''", "claude", "empty"),
        ("claude = '  '", "claude", "empty"),
    ],
)
def test_a_nonsense_setting_is_refused_with_its_key_and_reason(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    toml: str,
    key: str,
    reason: str,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(toml + "\n")
    monkeypatch.setenv("AGENTDOC_CONFIG", str(config))
    monkeypatch.delenv("AGENTDOC_CLAUDE", raising=False)
    doc = tmp_path / "doc.md"
    doc.write_text(DOC)
    assert main(["run", str(doc)]) == 1
    err = capsys.readouterr().err
    assert key in err
    assert reason in err
    assert doc.read_text() == DOC  # nothing was started


def test_sensible_settings_still_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentdoc.config import load_settings

    config = tmp_path / "config.toml"
    config.write_text("submit_marker = '>>go'\nsettle_step = 0.1\nsettle_max = 5\n")
    settings = load_settings(path=config, environ={})
    assert (settings.submit_marker, settings.settle_step, settings.settle_max) == (">>go", 0.1, 5)
