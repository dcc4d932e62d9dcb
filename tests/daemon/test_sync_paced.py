"""In a synced folder a streaming reply is written at the sync pace, not every quarter second."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentdoc.config import Settings
from agentdoc.daemon import paced
from agentdoc.daemon.service import Daemon
from agentdoc.document import fileio
from tests.support.daemon import DOC, Running, roles
from tests.support.fake_claude import FakeClaude
from tests.support.paths import TRANSCRIPTS
from tests.support.waiting import wait_for


def test_only_a_synced_folder_slows_the_writes(tmp_path: Path) -> None:
    settings = Settings(flush_interval=0.25, sync_flush_interval=5)
    plain = tmp_path / "plain" / "chat.md"
    synced = tmp_path / "share" / "chat.md"
    plain.parent.mkdir()
    (synced.parent / ".stfolder").mkdir(parents=True)
    assert paced(plain, settings).flush_interval == 0.25
    assert paced(synced, settings).flush_interval == 5
    listed = Settings(flush_interval=0.25, synced=(str(plain.parent),))
    assert paced(plain, listed).flush_interval == 5


@pytest.mark.parametrize(
    ("synced", "words"),
    # A 1.5 ms gap keeps the CLI's pipe full; 30 ms (a model's pace) leaves it empty between
    # deltas, where the turn also looks at the document.
    [(True, 2000), (False, 2000), (True, 150)],
)
def test_the_writes_of_a_long_reply_follow_the_sync_interval(
    tmp_path: Path,
    fake_claude: Callable[..., FakeClaude],
    monkeypatch: pytest.MonkeyPatch,
    synced: bool,
    words: int,
) -> None:
    folder = tmp_path / "share"
    folder.mkdir()
    if synced:
        (folder / ".stfolder").mkdir()
    doc = folder / "chat.md"
    doc.write_text(DOC)
    writes: list[float] = []
    real = fileio.atomic_write

    def counted(path: Path, data: Any, **kw: Any) -> bytes | None:
        if Path(path) == doc:
            writes.append(time.monotonic())
        return real(path, data, **kw)

    monkeypatch.setattr(fileio, "atomic_write", counted)
    # About three seconds of streaming: 2,000 lines, a millisecond and a half apart.
    fake = fake_claude("long_stream.ndjson", delay="0.0015" if words == 2000 else "0.03")
    if words < 2000:
        fake.env["FAKE_CLAUDE_TRANSCRIPT"] = str(_shortened(tmp_path, words))
    settings = fake.settings(
        settle_step=0.1,
        settle_max=1.0,
        sync_flush_interval=1.0,
        trusted=(str(folder),),  # a synced folder is answered only when trusted
        claim_wait=0,
    )
    with Running(Daemon([folder], settings, environ=fake.env, rescan_interval=0.5)):
        doc.write_text(DOC + "go\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply", timeout=60)
        wait_for(lambda: "agentdoc:reply" not in doc.read_text(), what="the end", timeout=30)
    assert "w1999" in doc.read_text()  # the closing message carries the whole text
    streamed = writes[-1] - writes[0]
    if synced:
        # The opening, the first text, one per interval, the end: counted, bounded by the
        # time the reply actually took (however slow the machine).
        assert 3 <= len(writes) <= streamed / 1.0 + 4, (len(writes), streamed)
        if words < 2000:
            # At least 4.5 s of streaming: the text in between is written too, not only at the end.
            assert len(writes) >= 4, (len(writes), streamed)
    else:
        assert len(writes) > streamed / 1.0 + 4, (len(writes), streamed)


def _shortened(tmp_path: Path, words: int) -> Path:
    """long_stream.ndjson with only its first `words` deltas (its opening and end kept)."""
    lines = (TRANSCRIPTS / "long_stream.ndjson").read_text().splitlines(keepends=True)
    deltas = [i for i, line in enumerate(lines) if '"text_delta"' in line]
    kept = lines[: deltas[0] + words] + lines[deltas[-1] + 1 :]
    short = tmp_path / "short_stream.ndjson"
    short.write_text("".join(kept))
    return short
