"""`agentdoc watch` as a person runs it: a process, the real Claude CLI, the offline API.

The in-process rows (`warm`, `stream`, `first`) are diagnostics; these rows are where the targets
are judged. Each runs `python -m agentdoc watch` on a folder of its own, with the real CLI
(`$AGENTDOC_CLAUDE` or `node_modules/.bin/claude`) pointed at `agentdoc.agents.fakeapi`, and
times from a save to the moment the API receives the turn's request (a condition wait).

* `d/warm`: a document's second turn, its CLI warm from the first. The baseline of the rows below.
* `d/opened`: a document with a session, opened by an editor after the daemon started (its CLI
  not running), the person types for TYPING s, saves a prompt.
* `d/new`: a document made by `agentdoc new` while the daemon runs, opened, typed, saved.
* `d/imported`: a document with history but no session (pasted, imported), opened, typed, saved;
  `d/imported/1M` is the same with 1 MiB of history, against `d/imported` (10 KiB).
* `d/delta/1M` vs `d/delta/10K`: the daemon process's CPU (from /proc) over a warm turn that
  streams DELTAS text deltas, divided by DELTAS, on a 1 MiB and a 10 KiB document.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import live
from core import FRONTMATTER, exchange
from measure import CheckFailed, Row, wait_until
from warm import REPO, find_claude
from watching import _cpu_seconds

from agentdoc.agents.fakeapi import FakeMessagesAPI
from agentdoc.records.status import read_status, state_file

TIMEOUT = 60.0
TYPING = 2.0  # seconds between opening a document and saving a prompt into it (modelled)
LONG_AGO = 1_000_000_000  # an mtime that is not "used shortly before start-up"
DELTAS = 2000
LONG_REPLY = {"content": [{"type": "text", "text": " ".join(f"w{i}" for i in range(DELTAS))}]}


def _env(api: FakeMessagesAPI, folder: Path, claude: str) -> dict[str, str]:
    home = folder / "home"
    home.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": api.base_url,
        "ANTHROPIC_API_KEY": "sk-bench",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "AGENTDOC_CLAUDE": claude,
        "AGENTDOC_CONFIG": str(folder / "config.toml"),  # absent: the defaults
        "PYTHONPATH": str(REPO),
    }


def history(size: int, session: str | None = None) -> str:
    head = FRONTMATTER
    if session is not None:
        head = head.replace("agentdoc: {}", f"agentdoc: {{session: {session}}}")
    return head + "".join(exchange(i) for i in range(max(1, size // 2100))) + "## User\n\n"


class Watch:
    """One `agentdoc watch` process over `folder/docs`."""

    def __init__(self, folder: Path, env: dict[str, str], *args: str) -> None:
        self.docs = folder / "docs"
        self.docs.mkdir(exist_ok=True)
        self.log = folder / f"watch-{time.monotonic_ns()}.log"
        self.env = env
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "agentdoc", "-v", "watch", *args, str(self.docs)],
                env=env,
                cwd=folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(lambda: self.logged("start-up done"), TIMEOUT, 0.01, "the daemon's start-up")

    def logged(self, text: str) -> bool:
        if self.proc.poll() is not None:
            raise CheckFailed(f"agentdoc watch exited: {self.log.read_text()[-2000:]}")
        return text.encode() in self.log.read_bytes()

    def cpu(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def close(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)


class _Ended:
    """Whether a document's turn has ended, looked at without opening the document: every
    open is an event the daemon handles, and 200 of them a second would be measured as its
    own cost. The status file is read only when its stat changed."""

    def __init__(self, doc: Path, prompt: str) -> None:
        self.doc, self.prompt = doc, prompt
        self.status = state_file(doc, ".status.json")
        self.stamp: tuple[int, int] | None = None

    def __call__(self) -> bool:
        try:
            st = os.stat(self.status)
        except OSError:
            return False
        if (st.st_mtime_ns, st.st_ino) == self.stamp:
            return False
        self.stamp = (st.st_mtime_ns, st.st_ino)
        found = read_status(self.doc)
        if found is None or found.state != "idle":
            return False
        text = self.doc.read_text(encoding="utf-8")
        at = text.rfind(self.prompt)
        return at >= 0 and "## User" in text[at + len(self.prompt) :]


def turn(api: FakeMessagesAPI, doc: Path, prompt: str) -> float:
    """Save `prompt` into `doc`; seconds until the API has its request. Waits for the reply."""
    seen = len(api.requests)
    text = doc.read_text(encoding="utf-8") + prompt + "\n"
    start = time.perf_counter()
    doc.write_text(text, encoding="utf-8")
    api.wait_for_requests(seen + 1, TIMEOUT)
    took = time.perf_counter() - start
    wait_until(_Ended(doc, prompt), TIMEOUT, 0.005, f"the reply in {doc.name}")
    time.sleep(0.4)  # a person reads the reply: the next save is not a burst after our write
    return took


def opened_turn(api: FakeMessagesAPI, doc: Path, prompt: str) -> float:
    doc.read_bytes()  # an editor opens the document
    time.sleep(TYPING)
    return turn(api, doc, prompt)


def _new(watch: Watch, doc: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "agentdoc", "new", str(doc)],
        env=watch.env,
        check=True,
        capture_output=True,
    )
    time.sleep(0.4)  # `agentdoc new` then the editor: the creation settles first


def bench_daemon(folder: Path, reps: int, check: bool) -> list[Row]:
    claude = find_claude()
    samples: dict[str, list[float]] = {}
    with FakeMessagesAPI(default=[{"type": "text", "text": "ok"}]) as api:
        env = _env(api, folder, claude)
        watch = Watch(folder, env)
        docs = watch.docs.resolve()
        try:
            for rep in range(reps + 1):  # the first round warms caches up and is left out
                keep = rep > 0
                doc = docs / f"warm-{rep}.md"
                doc.write_text(history(0), encoding="utf-8")
                turn(api, doc, "first")
                took = turn(api, doc, "second")
                samples.setdefault("warm", []).append(took) if keep else None
                new = docs / f"new-{rep}.md"
                _new(watch, new)
                took = opened_turn(api, new, "first of a new one")
                samples.setdefault("new", []).append(took) if keep else None
                for size, label in ((10 * 1024, "imported"), (1024 * 1024, "imported/1M")):
                    doc = docs / f"{label.replace('/', '-')}-{rep}.md"
                    doc.write_text(history(size), encoding="utf-8")
                    time.sleep(0.4)
                    took = opened_turn(api, doc, f"first of {label}")
                    samples.setdefault(label, []).append(took) if keep else None
        finally:
            watch.close()
        # A restart: the documents have sessions and no CLI, and were last used long ago.
        for doc in docs.glob("warm-*.md"):
            os.utime(doc, (LONG_AGO, LONG_AGO))
        watch = Watch(folder, env)
        try:
            for rep in range(reps + 1):
                took = opened_turn(api, docs / f"warm-{rep}.md", "after a restart")
                samples.setdefault("opened", []).append(took) if rep > 0 else None
        finally:
            watch.close()
    return _rows(samples) + bench_deltas(folder / "deltas", max(1, reps // 2), check, claude)


def _rows(samples: dict[str, list[float]]) -> list[Row]:
    warm = statistics.median(samples["warm"])

    def over(name: str) -> str:
        return f"{(statistics.median(samples[name]) - warm) * 1000:+.0f} ms over a warm turn"

    return [
        Row("d/warm", "watch process: 2nd turn, save → API request", tuple(samples["warm"])),
        Row(
            "d/opened",
            "session doc opened after start: 1st turn",
            tuple(samples["opened"]),
            baseline="d/warm",
            note=over("opened"),
        ),
        Row(
            "d/new",
            "`agentdoc new`, opened: its 1st turn",
            tuple(samples["new"]),
            baseline="d/warm",
            note=over("new"),
        ),
        Row(
            "d/imported",
            "10 KiB history, no session, opened: 1st turn",
            tuple(samples["imported"]),
            baseline="d/warm",
            note=over("imported"),
        ),
        Row(
            "d/imported/1M",
            "1 MiB history, no session, opened: 1st turn",
            tuple(samples["imported/1M"]),
            baseline="d/imported",
            note=f"{(statistics.median(samples['imported/1M']) - statistics.median(samples['imported'])) * 1000:+.0f} ms over 10 KiB",  # noqa: E501
        ),
    ]


def bench_deltas(folder: Path, reps: int, check: bool, claude: str) -> list[Row]:
    """Daemon CPU per streamed delta: a warm turn of DELTAS deltas into a long document."""
    folder.mkdir()
    cpu: dict[str, list[float]] = {"1M": [], "10K": []}
    with FakeMessagesAPI(default=LONG_REPLY, delta_delay=0.001) as api:
        watch = Watch(folder, _env(api, folder, claude))
        docs = watch.docs.resolve()
        try:
            for rep in range(reps):
                for size, label in ((1024 * 1024, "1M"), (10 * 1024, "10K")):
                    doc = docs / f"{label}-{rep}.md"
                    doc.write_text(history(size), encoding="utf-8")
                    time.sleep(0.4)
                    turn(api, doc, "first")  # starts the CLI; its reply is long too
                    before = watch.cpu()
                    turn(api, doc, "second")
                    cpu[label].append((watch.cpu() - before) / DELTAS)
                    text = doc.read_text(encoding="utf-8")
                    if check and text.count(f"w{DELTAS - 1}") < 2:
                        raise CheckFailed(f"d/delta/{label}: the long reply is not in the document")
        finally:
            watch.close()
    return [
        Row(
            "d/delta/1M",
            f"watch process CPU per delta, {DELTAS} deltas, 1 MiB doc",
            tuple(cpu["1M"]),
            baseline="d/delta/10K",
        ),
        Row("d/delta/10K", "the same on a 10 KiB document", tuple(cpu["10K"])),
    ]


PACED = 300  # text deltas of a turn at a model's pace
PACE = 0.015  # seconds between them, as a model streams (10–20 ms)


def bench_pace(folder: Path, reps: int, check: bool) -> list[Row]:
    """A whole turn's daemon CPU at a model's pace: a warm turn of PACED deltas PACE apart,
    from the save to the turn's end (set-up, streamed writes, the aftermath), on a small and a
    1 MiB document. What does not scale with the reply shows as the per-turn figure."""
    claude = find_claude()
    folder = folder / "turns"
    folder.mkdir()
    reply = {"content": [{"type": "text", "text": " ".join(f"p{i}" for i in range(PACED))}]}
    cpu: dict[str, list[float]] = {"1M": [], "10K": []}
    with FakeMessagesAPI(default=reply, delta_delay=PACE) as api:
        watch = Watch(folder, _env(api, folder, claude))
        docs = watch.docs.resolve()
        try:
            for rep in range(reps):
                for size, label in ((10 * 1024, "10K"), (1024 * 1024, "1M")):
                    doc = docs / f"{label}-{rep}.md"
                    doc.write_text(history(size), encoding="utf-8")
                    time.sleep(0.4)
                    turn(api, doc, "first")  # starts the CLI
                    before = watch.cpu()
                    turn(api, doc, "second")
                    cpu[label].append(watch.cpu() - before)
                    if check and doc.read_text(encoding="utf-8").count(f"p{PACED - 1}") < 2:
                        raise CheckFailed(f"d/pace/{label}: the reply is not in the document")
        finally:
            watch.close()
    per_delta = {label: tuple(c / PACED for c in found) for label, found in cpu.items()}
    return [
        Row(
            "d/pace/turn",
            f"watch CPU for a whole turn, {PACED} deltas {PACE * 1000:.0f} ms apart, 10 KiB doc",
            tuple(cpu["10K"]),
            note=f"target ≤ 60 ms; {statistics.median(per_delta['10K']) * 1e6:.0f} µs a delta",
        ),
        Row(
            "d/pace/1M",
            f"watch CPU per delta at that pace, 1 MiB doc ({PACED} deltas)",
            per_delta["1M"],
            note="target ≤ 100 µs",
        ),
    ]


POLL_NOTES = 5000


def bench_poll(folder: Path, idle: float, check: bool) -> list[Row]:
    """Idle CPU of `agentdoc watch --poll` on POLL_NOTES plain notes, without and with a git
    repository holding them (`.git/` has a file per object: nothing a poll needs to look at)."""
    from watching import make_tree

    rows: list[Row] = []
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(folder / "home"),
        "AGENTDOC_CONFIG": str(folder / "config.toml"),
        "PYTHONPATH": str(REPO),
    }
    for label in ("plain", "git"):
        top = folder / label
        top.mkdir()
        make_tree(top / "docs", POLL_NOTES)
        if label == "git":
            git = ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C", str(top / "docs")]
            subprocess.run([*git, "init", "-q"], check=True)
            subprocess.run([*git, "add", "-A"], check=True)
            subprocess.run([*git, "commit", "-qm", "notes"], check=True)
        watch = Watch(top, env, "--poll")
        try:
            time.sleep(3.0)  # folders just made are listed again while their mtimes are fresh
            before = watch.cpu()
            time.sleep(idle)
            share = (watch.cpu() - before) / idle
        finally:
            watch.close()
        rows.append(
            Row(
                f"poll/{label}",
                f"watch --poll, {POLL_NOTES:,} notes{' in git' if label == 'git' else ''}: "
                "idle CPU s/s",
                (share,),
                note=f"{share * 100:.2f} % of a core",
            )
        )
    return rows


MANY = 24  # documents a team's folder has answered at once
MANY_DELTAS = 300
MANY_PACE = 0.015


def _short_transcript(folder: Path) -> Path:
    """The recorded long reply cut to MANY_DELTAS text deltas (its final message unchanged)."""
    lines = (live.TRANSCRIPT.parent / "long_stream.ndjson").read_bytes().splitlines(True)
    deltas = [i for i, line in enumerate(lines) if b'"content_block_delta"' in line]
    keep = set(deltas[MANY_DELTAS:])
    path = folder / "short_stream.ndjson"
    path.write_bytes(b"".join(line for i, line in enumerate(lines) if i not in keep))
    return path


def bench_many(folder: Path, reps: int, check: bool) -> list[Row]:
    """`agentdoc watch` answering MANY documents at once against one alone: the daemon's CPU
    per delta (the agents are the replaying fake, one process each, not counted), each reply
    MANY_DELTAS deltas MANY_PACE apart, and the daemon's RSS after the wave."""
    folder = folder / "many"
    fake = live.install_fake(folder / "bin")
    (folder / "config.toml").write_text(
        f'claude = "{fake.executable}"\nwarm_sessions = 0\nmax_concurrent_turns = {MANY}\n',
        encoding="utf-8",
    )
    env = {
        **fake.env,
        "FAKE_CLAUDE_TRANSCRIPT": str(_short_transcript(folder)),
        "FAKE_CLAUDE_DELAY": str(MANY_PACE),
        "AGENTDOC_CONFIG": str(folder / "config.toml"),
        "PYTHONPATH": str(REPO),
        "HOME": str(folder),
    }
    cpu: dict[int, list[float]] = {1: [], MANY: []}
    rss: list[float] = []
    watch = Watch(folder, env)
    try:
        for rep in range(reps):
            for count in (1, MANY):
                docs = [watch.docs / f"r{rep}-n{count}-{i}.md" for i in range(count)]
                for doc in docs:
                    doc.write_text(history(10 * 1024), encoding="utf-8")
                time.sleep(0.5)  # created, then typed into: not one burst
                before = watch.cpu()
                for doc in docs:
                    doc.write_text(doc.read_text(encoding="utf-8") + "go\n", encoding="utf-8")
                for doc in docs:
                    wait_until(_Ended(doc, "go"), TIMEOUT * 2, 0.02, f"the reply in {doc.name}")
                cpu[count].append((watch.cpu() - before) / (count * MANY_DELTAS))
                if check and any("## Assistant" not in d.read_text() for d in docs):
                    raise CheckFailed("many: a document has no reply")
            rss.append(_rss(watch.proc.pid))
    finally:
        watch.close()
    return [
        Row(
            f"many/{MANY}",
            f"watch CPU per delta, {MANY} documents answered at once ({MANY_DELTAS} deltas each)",
            tuple(cpu[MANY]),
            baseline="many/1",
            note=f"daemon RSS after: {statistics.median(rss) / 2**20:.0f} MiB",
        ),
        Row("many/1", "the same, one document alone", tuple(cpu[1])),
    ]


def _rss(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1]) * 1024
    return 0.0
