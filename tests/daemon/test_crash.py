"""SIGKILL `agentdoc watch` at random points of a streaming turn, then restart it.

Promise 3 (crash-safe): after each kill the document is a whole version that parses, with all
of the user's text; after the restart the unfinished turn is marked interrupted (no streaming
markers left) and its prompt is not sent again. Kill points are drawn from a seeded generator,
so a failing trial can be replayed; the trial count and the kill points reached are printed
(run with `-s` to see them).

One daemon process serves two roles per trial: it is the restart that recovers trial k-1, and
then the victim of trial k. That halves the process start-ups and keeps ~30 trials near a
minute on a small machine.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentdoc.document import parser as document
from agentdoc.document.fileio import TEMP_PREFIX
from agentdoc.records import journal
from tests.support.fake_claude import FakeClaude
from tests.support.processes import (
    CLI,
    WatchProcess,
    base_env,
    kill_all,
    processes_with_env,
    start_watch,
    state_of,
    watching,
    write_quick_config,
)
from tests.support.waiting import wait_for

SEED = int(os.environ.get("AGENTDOC_CRASH_SEED", "20240611"))
TRIALS = int(os.environ.get("AGENTDOC_CRASH_TRIALS", "30"))
LINE_DELAY = "0.0004"  # ~2000 transcript lines: a reply streams for about a second
KILL_WINDOW = 1.8  # seconds after the save: covers settle, the whole stream and its close

DOC = """---
title: Crash trial {k}
agentdoc:
  trigger: save
---

# Crash trial {k}

Notes the user wrote before asking, line one.
Notes line two, with ünïcödé and a `code span`.

## User

Prompt {k}: tell me a long story.
It has two lines.
"""

# What the file showed at the moment of the kill.
BEFORE_FIRST_WRITE = "before first write"
OPENED_EMPTY = "region opened, no text yet"
MID_STREAM = "mid-stream"
AFTER_END = "after end"


@dataclass(frozen=True)
class Trial:
    k: int
    delay: float
    point: str
    orphans: int


def kill_point(text: str) -> str:
    if "agentdoc:reply" in text:
        start = text.index("agentdoc:reply")
        body = text[text.index("\n", start) + 1 : text.index("<!-- agentdoc:end", start)]
        return MID_STREAM if body.strip() else OPENED_EMPTY
    return AFTER_END if "## Assistant" in text else BEFORE_FIRST_WRITE


def assert_lines_kept(written: str, text: str) -> None:
    """Every line the user wrote is in `text`, whole and in order."""
    lines = iter(text.splitlines())
    for line in written.splitlines():
        assert any(line == other for other in lines), f"lost or changed: {line!r}"


def temp_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(our atomic-write temp files, any other unexpected files) under `folder`."""
    temps, strange = [], []
    for path in folder.rglob("*"):
        if path.name.startswith(TEMP_PREFIX):
            temps.append(path)
        elif path.is_file() and not _expected(path):
            strange.append(path)
    return temps, strange


def _expected(path: Path) -> bool:
    if path.parent.name == ".agentdoc":
        return path.name.endswith(
            (".status.json", ".journal.jsonl", ".history.md", ".turns.json", ".lock", ".gitignore")
        )
    return path.suffix == ".md"


def prompt_calls(fake: FakeClaude, k: int) -> int:
    return sum(f"Prompt {k}:" in call["stdin"] for call in fake.calls())


def check_whole(doc: Path, written: str) -> None:
    text = doc.read_bytes().decode("utf-8")  # strict: a torn write would fail here
    document.parse(text)
    assert_lines_kept(written, text)


def check_recovered(doc: Path, written: str, point: str) -> None:
    text = doc.read_text(encoding="utf-8")
    parsed = document.parse(text)
    assert_lines_kept(written, text)
    assert "agentdoc:reply" not in text and "agentdoc:end" not in text
    assert not journal.journal_path(doc).exists()
    roles = [t.role for t in parsed.turns]
    if point == BEFORE_FIRST_WRITE:
        assert roles == ["user"], "the prompt should still be waiting, untouched"
        return
    assert roles == ["user", "assistant", "user"]
    reply = parsed.turns[1].content
    if point == AFTER_END:
        assert "w1999" in reply and "interrupted" not in reply
    else:
        assert "interrupted" in reply


@pytest.fixture
def env(
    tmp_path: Path, fake_claude: Callable[..., FakeClaude]
) -> tuple[FakeClaude, dict[str, str]]:
    fake = fake_claude("long_stream.ndjson", delay=LINE_DELAY)
    config = write_quick_config(
        tmp_path / "config.toml",
        warm_sessions=0,  # the replaying fake is one-shot; warm mode has its own e2e tests
    )
    environ = base_env(
        tmp_path / "home",
        **fake.env,
        AGENTDOC_CLAUDE=str(fake.executable),
        AGENTDOC_CONFIG=str(config),
    )
    return fake, environ


def run_trial(
    k: int, delay: float, folder: Path, daemon: WatchProcess, fake: FakeClaude
) -> tuple[Trial, str]:
    doc = folder / f"trial-{k:02d}.md"
    written = DOC.format(k=k)
    saved = time.monotonic()
    doc.write_text(written, encoding="utf-8")
    # The random pause *is* the experiment: it picks where in the turn the kill lands.
    time.sleep(max(0.0, saved + delay - time.monotonic()))
    daemon.kill()
    orphans = processes_with_env("FAKE_CLAUDE_LOG", str(fake.log))
    kill_all(orphans)  # a claude in its own session outlives the daemon's process group
    text = doc.read_bytes().decode("utf-8")
    check_whole(doc, written)
    _temps, strange = temp_files(folder)
    assert not strange, f"unexpected files after the kill: {strange}"
    return Trial(k, delay, kill_point(text), len(orphans)), written


def test_sigkill_at_random_points_never_breaks_the_document_or_resends(
    tmp_path: Path, env: tuple[FakeClaude, dict[str, str]]
) -> None:
    fake, environ = env
    folder = tmp_path / "docs"
    folder.mkdir()
    logs = tmp_path / "logs"
    logs.mkdir()
    rng = random.Random(SEED)
    trials: list[Trial] = []
    daemon = start_watch(folder, environ, logs / "watch-00.log").wait_ready()
    try:
        for k in range(TRIALS):
            trial, written = run_trial(k, rng.uniform(0, KILL_WINDOW), folder, daemon, fake)
            trials.append(trial)
            daemon = start_watch(folder, environ, logs / f"watch-{k + 1:02d}.log").wait_ready()
            doc = folder / f"trial-{k:02d}.md"
            check_recovered(doc, written, trial.point)
            assert prompt_calls(fake, k) <= 1
        daemon.send(signal.SIGTERM)
        assert daemon.wait() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
        kill_all(processes_with_env("FAKE_CLAUDE_LOG", str(fake.log)))

    report(trials, temp_files(folder)[0])
    for trial in trials:
        calls = prompt_calls(fake, trial.k)
        # Killed before its first write, the turn may already have handed the prompt to the
        # agent it started: sent once then, never again (the restarted daemon does not resend).
        expected = {BEFORE_FIRST_WRITE: {0, 1}, OPENED_EMPTY: {0, 1}}.get(trial.point, {1})
        assert calls in expected, f"trial {trial}: prompt sent {calls} times"


def report(trials: list[Trial], temps: list[Path]) -> None:
    points = collections.Counter(t.point for t in trials)
    print(f"\n{len(trials)} SIGKILL trials (seed {SEED}):")
    for point in (BEFORE_FIRST_WRITE, OPENED_EMPTY, MID_STREAM, AFTER_END):
        print(f"  {point:28} {points[point]:3}")
    where = collections.Counter(p.parent.name for p in temps)
    print(f"  leftover {TEMP_PREFIX}* files: {len(temps)} {dict(where)}")
    orphans = sum(t.orphans for t in trials)
    print(f"  claude processes still alive after the daemon's group was killed: {orphans}")


def test_status_of_a_turn_killed_mid_stream_is_not_streaming_after_restart(
    tmp_path: Path, env: tuple[FakeClaude, dict[str, str]]
) -> None:
    fake, environ = env
    fake_gated = {
        **environ,
        "FAKE_CLAUDE_GATE": str(tmp_path / "never"),
        "FAKE_CLAUDE_GATE_AT": "300",
    }
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = folder / "trial.md"
    daemon = start_watch(folder, fake_gated, tmp_path / "first.log").wait_ready()
    try:
        doc.write_text(DOC.format(k=0), encoding="utf-8")
        wait_for(lambda: "w10 " in doc.read_text(encoding="utf-8"), what="the reply to stream")
        wait_for(lambda: state_of(doc) == "streaming", what='status "streaming"')
    finally:
        daemon.kill()
        kill_all(processes_with_env("FAKE_CLAUDE_LOG", str(fake.log)))
    with watching(folder, environ, tmp_path / "second.log"):
        assert "interrupted" in doc.read_text(encoding="utf-8")
        assert state_of(doc) != "streaming"


def test_starting_the_daemon_leaves_a_live_one_shot_turn_alone(
    tmp_path: Path, env: tuple[FakeClaude, dict[str, str]]
) -> None:
    _fake, environ = env
    gate = tmp_path / "gate"
    gated = {**environ, "FAKE_CLAUDE_GATE": str(gate), "FAKE_CLAUDE_GATE_AT": "300"}
    folder = tmp_path / "docs"
    folder.mkdir()
    doc = folder / "one-shot.md"
    doc.write_text(DOC.format(k=0), encoding="utf-8")
    with (tmp_path / "run.log").open("wb") as out:
        one_shot = subprocess.Popen(
            [*CLI, "run", str(doc)], env=gated, stdout=out, stderr=out, cwd=folder
        )
    try:
        wait_for(lambda: "w10 " in doc.read_text(encoding="utf-8"), what="the one-shot reply")
        with watching(folder, gated, tmp_path / "watch.log"):
            gate.touch()
            assert one_shot.wait(20) == 0
    finally:
        gate.touch()
        if one_shot.poll() is None:
            one_shot.kill()
            one_shot.wait()
    text = doc.read_text(encoding="utf-8")
    assert [t.role for t in document.parse(text).turns] == ["user", "assistant", "user"]
    assert text.count("w1999.") == 1 and text.count("w10 ") == 1
    assert "interrupted" not in text
