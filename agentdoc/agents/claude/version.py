"""Which Claude Code release a ``claude`` executable is, and the flags that depend on it.

Some flags exist only in newer releases; an older CLI given one refuses to start. So a flag
that depends on the release is passed only when ``claude --version`` says it is known there,
and an older CLI runs exactly as it did before. The answer is cached per executable and its
modification time, so a turn pays for the probe once per installed CLI, not once per turn.
"""

from __future__ import annotations

import functools
import logging
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

Version = tuple[int, ...]

PROBE_TIMEOUT = 20.0
# `--thinking-display` (hidden from `--help`): the oldest release each value was seen in.
# 2.1.197 accepts `summarized` and `omitted`; 2.1.330 adds `highlights`.
THINKING_DISPLAY_SINCE: dict[str, Version] = {
    "summarized": (2, 1, 197),
    "omitted": (2, 1, 197),
    "highlights": (2, 1, 330),
}


def parse_version(output: str) -> Version | None:
    found = re.search(r"(\d+)\.(\d+)\.(\d+)", output)
    return tuple(int(g) for g in found.groups()) if found else None


def dotted(version: Version) -> str:
    return ".".join(map(str, version))


def thinking_display_argv(display: str | None, version: Version | None) -> list[str]:
    """``--thinking-display=…`` when asked for and this release knows the value, else nothing."""
    since = THINKING_DISPLAY_SINCE.get(display or "")
    if since is None or version is None or version < since:
        return []
    return [f"--thinking-display={display}"]


def cli_version(executable: str) -> Version | None:
    """The release of `executable` (None when it cannot tell), probed once per file version."""
    try:
        stamp = Path(executable).stat().st_mtime_ns
    except OSError:
        return None
    return _probe(executable, stamp)


@functools.lru_cache(maxsize=16)
def _probe(executable: str, _stamp: int) -> Version | None:
    try:
        done = subprocess.run(
            [executable, "--version"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("cannot tell the version of %s: %s", executable, exc)
        return None
    version = parse_version(done.stdout) if done.returncode == 0 else None
    if version is None:
        log.info("cannot tell the version of %s from %r", executable, done.stdout[:200])
    return version


def run_version(
    executable: str, environ: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """`executable --version` run afresh, as `doctor` shows it: its exit code and words, or
    the OSError or TimeoutExpired that stopped it. It starts no session, in no folder."""
    return subprocess.run(
        [executable, "--version"],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(environ),
        stdin=subprocess.DEVNULL,
        check=False,
    )


def release_flags(executable: str, thinking_display: str | None) -> list[str]:
    """The release-dependent flags for a turn; probes the CLI only when one is asked for."""
    if thinking_display is None:
        return []
    version = cli_version(executable)
    flags = thinking_display_argv(thinking_display, version)
    if not flags:
        since = dotted(THINKING_DISPLAY_SINCE[thinking_display])
        shown = dotted(version) if version else "of unknown version"
        _warn_once(
            f"thinking_display = {thinking_display!r} needs Claude Code {since} or newer; "
            f"{executable} is {shown}, so it runs without it"
        )
    return flags


@functools.lru_cache(maxsize=16)
def _warn_once(message: str) -> None:
    log.warning("%s", message)
