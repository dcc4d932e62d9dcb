"""Running the Claude Code CLI: the argv, the child environment, and a process we can stop.

The argv is always a list (never a shell) and every value rides in a one-token ``--flag=value``
form, so a value starting with ``-`` can never be read as another flag. The prompt goes on stdin,
which also avoids argv length limits for long transcripts. The child runs in its own process group
so a stop reaches anything it spawned; the stop is staged (SIGINT, which lets the CLI save its
session, then SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shutil
import subprocess
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentdoc.agents.base.child import Child, StderrTail, child_env
from agentdoc.agents.base.child import spawn as spawn_child
from agentdoc.agents.base.clearance import Clearance
from agentdoc.agents.base.request import AgentRequest
from agentdoc.agents.claude.framing import iter_line_batches
from agentdoc.agents.claude.output import (
    MemoryOutput,
    PolledLines,
    memory_files_supported,
    pipe_chunks,
)
from agentdoc.agents.claude.prompt import neutralise, user_message
from agentdoc.agents.claude.version import release_flags
from agentdoc.config import Settings
from agentdoc.errors import AgentNotFound

log = logging.getLogger(__name__)

_EOF = b""


class ClaudeCannotStart(AgentNotFound):
    """The CLI was found but cannot be started: not executable, not a program, a bad argument."""


def resolve_executable(name: str) -> str:
    found = shutil.which(name)
    if found is not None:
        return found
    path = Path(name)
    # which() skips a path that exists but cannot be run; say so instead of "cannot find".
    if os.sep in name and path.is_dir():
        raise ClaudeCannotStart(
            f"{name!r} is a folder, not the Claude Code CLI; set AGENTDOC_CLAUDE to the "
            "`claude` executable."
        )
    if os.sep in name and path.exists():
        raise ClaudeCannotStart(
            f"the Claude Code CLI at {name!r} is not executable: run `chmod +x {name}`, or set "
            "AGENTDOC_CLAUDE to another path."
        )
    raise AgentNotFound(
        f"cannot find the Claude Code CLI ({name!r}). Install it with "
        "`npm install -g @anthropic-ai/claude-code`, or set AGENTDOC_CLAUDE to its path."
    )


def check_argv(argv: list[str]) -> None:
    """Refuse values the OS cannot pass to a program, naming the flag they came from."""
    for token in argv:
        if "\0" in token:
            flag = token.partition("=")[0]
            raise ClaudeCannotStart(
                f"cannot pass {flag} to claude: its value contains a NUL character (\\0); "
                "remove it from the document's frontmatter or the settings."
            )


def build_argv(
    executable: str, request: AgentRequest, settings: Settings, *, warm: bool = False
) -> list[str]:
    """The argv of a turn; `warm`: of a long-lived process that reads prompts from stdin."""
    argv = [
        executable,
        "-p",
        "--output-format=stream-json",
        "--verbose",
        "--include-partial-messages",
    ]
    if warm or request.images:
        # Pictures travel only as content blocks of a stream-json user message.
        argv.append("--input-format=stream-json")
    if request.resume:
        argv.append(f"--resume={request.resume}")
        if request.fork:
            argv.append("--fork-session")
            if request.resume_at:
                argv.append(f"--resume-session-at={request.resume_at}")
    if request.session_id:
        argv.append(f"--session-id={request.session_id}")
    if request.model:
        argv.append(f"--model={request.model}")
    if request.effort:
        argv.append(f"--effort={request.effort}")
    if request.append_system:
        argv.append(f"--append-system-prompt={request.append_system}")
    if request.clearance is not None and not request.clearance.folder_settings:
        # Only the user's own settings: a synced folder's `.claude/settings.json` (its hooks
        # run as this machine's user) and `.claude/settings.local.json` are ignored.
        argv.append("--setting-sources=user")
    argv.extend(release_flags(executable, settings.thinking_display))
    if settings.permission_mode:
        argv.append(f"--permission-mode={settings.permission_mode}")
    # These flags are variadic in the CLI; one-token forms keep them from swallowing others.
    argv.extend(f"--allowed-tools={tool}" for tool in settings.allowed_tools)
    argv.extend(f"--add-dir={folder}" for folder in settings.add_dirs)
    if warm and asks_permission(settings):
        argv.append("--permission-prompt-tool=stdio")
    # Claude's own tools may never write the files that answer its permission requests.
    argv.extend(f"--disallowed-tools={rule}" for rule in protect_rules(request.protect))
    return argv


def protect_rules(paths: Iterable[Path]) -> tuple[str, ...]:
    """CLI deny rules that keep every file-editing tool off `paths` (folders: their contents).

    ``Edit(...)`` rules cover Write, Edit, MultiEdit and NotebookEdit; ``//`` marks an absolute
    path in the CLI's permission rule syntax.
    """
    rules: list[str] = []
    for path in paths:
        rules.append(f"Edit(/{path})")
        if path.is_dir() or not path.suffix:
            rules.append(f"Edit(/{path}/**)")
    return tuple(rules)


def asks_permission(settings: Settings) -> bool:
    """Whether a tool that needs permission should ask (over stdio) rather than be refused.

    `bypassPermissions` and `dontAsk` make asking moot; `acceptEdits`, `plan`, `auto` and the
    default still leave tools that need an answer.
    """
    return settings.permission_mode not in ("bypassPermissions", "dontAsk")


def build_env(base: Mapping[str, str], settings: Settings) -> dict[str, str]:
    env = child_env(base)
    # A CLI started from inside another Claude Code session refuses to nest unless this is gone.
    env.pop("CLAUDECODE", None)
    env.setdefault("CLAUDE_CODE_MAX_RETRIES", str(settings.max_retries))
    # The CLI backs up the files its tools change only with this set in print mode; `undo`
    # restores them from those copies (see `rewind`).
    env.setdefault("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "true")
    return env


@dataclass
class ClaudeProcess:
    """A running CLI turn. Read stdout lines with `next_line()`; `stop()` from any thread."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    stdin_text: str
    clearance: Clearance | None
    _proc: subprocess.Popen[bytes] | None = field(default=None, init=False)
    # From a pipe's reader thread, lines go over a read at a time, not one by one.
    _lines: queue.Queue[list[bytes]] = field(default_factory=queue.Queue, init=False)
    _polled: PolledLines | None = field(default=None, init=False)  # a memory file's lines
    _batch: deque[bytes] = field(default_factory=deque, init=False)
    _stderr: StderrTail = field(default_factory=StderrTail, init=False)
    _child: Child | None = field(default=None, init=False)
    _threads: list[threading.Thread] = field(default_factory=list, init=False)
    _out: MemoryOutput | None = field(default=None, init=False)
    _err: MemoryOutput | None = field(default=None, init=False)

    def start(self) -> ClaudeProcess:
        if memory_files_supported():
            self._out, self._err = MemoryOutput("claude-stdout"), MemoryOutput("claude-stderr")
        try:
            self._proc = self._popen()
            self._child = Child(self._proc, "interrupt", "claude")
        except BaseException:
            for memory in (self._out, self._err):
                if memory is not None:
                    memory.close()
            raise
        self._spawn(self._feed_stdin)
        if self._out is not None:
            proc = self._proc
            self._polled = PolledLines(self._out, lambda: proc.poll() is not None)
        else:
            self._spawn(self._read_stdout)
            self._spawn(self._read_stderr)
        return self

    def _popen(self) -> subprocess.Popen[bytes]:
        return popen_claude(
            self.argv,
            self.cwd,
            self.env,
            clearance=self.clearance,
            stdout=self._out.fd if self._out else subprocess.PIPE,
            stderr=self._err.fd if self._err else subprocess.PIPE,
        )

    def _spawn(self, target: object) -> None:
        thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _feed_stdin(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(self.stdin_text.encode("utf-8"))
        except (BrokenPipeError, OSError):
            log.debug("claude closed stdin early")
        finally:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        # Only reading and framing happen here; parsing and document writes are the caller's.
        for batch in iter_line_batches(pipe_chunks(self._proc.stdout.fileno())):
            # b"" is the end-of-output sentinel; blank lines carry nothing
            if lines := [line for line in batch if line]:
                self._lines.put(lines)
        self._lines.put([_EOF])

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        self._stderr.drain(self._proc.stderr)

    def next_line(self, timeout: float) -> bytes | None:
        """The next stdout line; b"" at end of output; None if nothing arrived within timeout."""
        if not self._batch:
            batch = self._next_batch(max(timeout, 0.0))
            if batch is None:
                return None
            self._batch.extend(batch)
        return self._batch.popleft()

    def _next_batch(self, timeout: float) -> list[bytes] | None:
        if self._polled is not None:
            return self._polled.next_batch(timeout)
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            return None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the CLI, then end whatever it left running in its group."""
        assert self._proc is not None
        code = self._proc.wait(timeout)
        if self._polled is not None:
            self._polled.close()  # its file is closed below
        assert self._child is not None
        self._child.sweep()
        for thread in self._threads:
            thread.join(timeout=2)
        if any(thread.is_alive() for thread in self._threads):
            # Closing a file a reader still reads could hand its fd number to another file.
            log.warning("claude (pid %s) left output readers running", self._proc.pid)
            return code
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        if self._err is not None:
            self._stderr.add(self._err.read_new())
        for memory in (self._out, self._err):
            if memory is not None:
                memory.close()
        self._out = self._err = None
        return code

    def finish(self, grace: float) -> int:
        """The CLI has said its last word: give it `grace` seconds to exit, then stop it."""
        assert self._proc is not None
        try:
            return self.wait(grace)
        except subprocess.TimeoutExpired:
            log.info("claude (pid %s) still running after its result; stopping it", self.pid)
            self.stop()
            return self.wait()

    @property
    def stderr(self) -> str:
        if self._err is not None:
            self._stderr.add(self._err.read_new())
        return self._stderr.since()

    def respond(self, request_id: str, answer: Mapping[str, object]) -> bool:
        """A one-shot turn cannot be asked anything: its tools are allowed or refused by flags."""
        return False

    def stop(self, grace: float = 2.0) -> None:
        """SIGINT (the CLI saves its session) → SIGTERM → SIGKILL, to the whole group."""
        if self._child is not None:
            self._child.stop(grace)


def spawn(
    request: AgentRequest, settings: Settings, environ: Mapping[str, str] | None = None
) -> ClaudeProcess:
    executable = resolve_executable(settings.claude)
    argv = build_argv(executable, request, settings)
    check_argv(argv)
    env = build_env(os.environ if environ is None else environ, settings)
    log.debug("running %s in %s", argv, request.cwd)
    if request.tools_after is not None:
        # A one-shot CLI cannot hold its tools (no hook without a stream-json stdin), and its
        # prompt cannot wait in the pipe: after 3 s without input it goes on without one. So
        # it starts only once its tools may run, as before the snapshot ran beside a request.
        request.tools_after.wait()
    return ClaudeProcess(argv, request.cwd, env, stdin_text(request), request.clearance).start()


def stdin_text(request: AgentRequest) -> str:
    """What a one-shot CLI reads: the prompt, or one user message when pictures go with it."""
    if request.images:
        return user_message(request.prompt, request.message_id, request.images).decode("utf-8")
    return neutralise(request.prompt)


def popen_claude(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    clearance: Clearance | None,
    stdout: int = subprocess.PIPE,
    stderr: int = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """Start the CLI in its own process group, with a message that says how to fix a failure."""
    try:
        return spawn_child(argv, cwd, env, clearance=clearance, stdout=stdout, stderr=stderr)
    except FileNotFoundError as exc:
        raise AgentNotFound(f"cannot run {argv[0]!r}: {exc.strerror}") from exc
    except PermissionError as exc:
        raise ClaudeCannotStart(
            f"cannot run {argv[0]!r}: permission denied (is it executable? `chmod +x {argv[0]}`)"
        ) from exc
    except OSError as exc:
        # ENOEXEC and friends: the file is there but is not a program this system can run.
        raise ClaudeCannotStart(
            f"cannot run {argv[0]!r}: {exc.strerror or exc}; is AGENTDOC_CLAUDE the "
            "Claude Code CLI?"
        ) from exc
    except ValueError as exc:  # a NUL byte in the cwd or the environment
        raise ClaudeCannotStart(f"cannot start claude: {exc}") from exc
