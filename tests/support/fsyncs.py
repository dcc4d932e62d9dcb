"""Recording what a test's code asks of the file system: what it syncs to disk, what it stats."""

from __future__ import annotations

import os
import stat

import pytest


def record_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What each fsync of this test synced, "folder" or "file", in order (each still syncs)."""
    synced: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def record_stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path this test's code asked `os.stat` about, in order (each still answered)."""
    looked_at: list[str] = []
    real = os.stat

    def counting_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        looked_at.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counting_stat)
    return looked_at
