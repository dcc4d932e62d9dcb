"""A headless Neovim driven over its RPC socket, as a person's editor."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pytest

from tests.support.waiting import wait_for


def find_nvim() -> str:
    """Neovim 0.7 or newer (for `--server`/`--remote-send`); skipped without it, except on CI."""
    found = shutil.which("nvim")
    version = _version(found) if found else None
    if found is not None and version is not None and version >= (0, 7):
        return found
    message = (
        "Neovim 0.7 or newer is needed (`apt-get install neovim`); "
        f"found {'none' if found is None else version or 'an unknown version'}"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


class HeadlessNvim:
    """A headless Neovim with `path` open, driven over its RPC socket.

    `setup` are the start-up arguments that load what is under test (a recipe, a plugin).
    """

    def __init__(
        self, nvim: str, path: Path, scratch: Path, env: dict[str, str], setup: list[str]
    ) -> None:
        self.nvim = nvim
        self.scratch = scratch
        self.env = env
        self.socket = _socket_path(scratch)
        self.result = scratch / "expr.json"
        argv = [nvim, "--headless", "--clean", "-n", "-i", "NONE", "--listen", str(self.socket)]
        argv += [*setup, str(path)]
        with (scratch / "nvim.log").open("wb") as log:
            self.proc = subprocess.Popen(
                argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
            )
        wait_for(self._answers, "Neovim to listen on its socket", RPC_TIMEOUT)

    def _answers(self) -> bool:
        assert self.proc.poll() is None, "Neovim exited"
        if not self.socket.exists():
            return False
        try:
            return bool(self.expr("1") == 1)
        except subprocess.CalledProcessError:
            return False  # the socket is made a moment before Neovim takes connections on it

    def _client(self, *args: str) -> None:
        subprocess.run(
            [self.nvim, "--clean", "--headless", "--server", str(self.socket), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=RPC_TIMEOUT,
            check=True,
        )

    def expr(self, expression: str) -> Any:
        """Evaluate a Vim expression in the editor and return its value."""
        self.result.unlink(missing_ok=True)
        self._client("--remote-expr", f"writefile([json_encode({expression})], '{self.result}')")
        return json.loads(self.result.read_text())

    def type(self, keys: str) -> None:
        """Send keys as if typed (Vim key notation, e.g. `<Esc>`, `<CR>`)."""
        self._client("--remote-send", keys)

    def buffer(self) -> str:
        return str(self.expr("join(getline(1, '$'), \"\\n\")")) + "\n"

    def modified(self) -> bool:
        return bool(self.expr("&modified"))

    def shows(self, path: Path) -> bool:
        """The buffer is unmodified and matches the file on disk."""
        return not self.modified() and self.buffer() == path.read_text(encoding="utf-8")

    def log(self) -> str:
        return (self.scratch / "nvim.log").read_text(errors="replace")

    def quit(self) -> None:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            self.type("<Esc>:qa!<CR>")
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.socket.parent != self.scratch:
            shutil.rmtree(self.socket.parent, ignore_errors=True)


RPC_TIMEOUT = 10.0


P = ParamSpec("P")
N = TypeVar("N", bound=HeadlessNvim)


def quit_at_the_end(start: Callable[P, N]) -> Iterator[Callable[P, N]]:
    """For a fixture to `yield from`: `start` as it is, but every Neovim it started is quit when
    the test ends, whatever the test did."""
    started: list[N] = []

    def tracked(*args: P.args, **kwargs: P.kwargs) -> N:
        editor = start(*args, **kwargs)
        started.append(editor)
        return editor

    yield tracked
    for editor in started:
        editor.quit()


def _version(nvim: str) -> tuple[int, int] | None:
    out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=10).stdout
    match = re.match(r"NVIM v(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def _socket_path(scratch: Path) -> Path:
    """A Unix socket path must stay under ~100 bytes; a deep tmp_path may not."""
    path = scratch / "nvim.sock"
    if len(str(path)) < 100:
        return path
    return Path(tempfile.mkdtemp(prefix="nvim-")) / "sock"
