"""Who may spend this machine's agent: trust of a synced folder, the turn budget, notify."""

from __future__ import annotations

import json
import sys
from collections import deque
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.config import Settings, config_path
from agentdoc.daemon.gate import HOUR, Gate, Held, budget_wait
from agentdoc.daemon.notify import Notifier, one_line
from agentdoc.daemon.service import Daemon
from agentdoc.daemon.synced.claims import Claim, Claims, machine_id, owner, read_claims, write_claim
from agentdoc.daemon.synced.trust import TrustList, covers, trust_folder, trusted_list
from agentdoc.document.splice import new_nonce, open_reply
from agentdoc.errors import AgentdocError
from agentdoc.records import open_regions, status
from agentdoc.turn import Progress
from tests.support.daemon import DOC, Running, roles
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for

NOTE = """\
import json, os, sys
keys = ("AGENTDOC_EVENT", "AGENTDOC_DOCUMENT", "AGENTDOC_TURN", "AGENTDOC_SUMMARY")
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({k: os.environ.get(k) for k in keys}) + "\\n")
"""


def held_why(path: Path) -> str | None:
    shown = status.read_status(path)
    return shown.held if shown is not None and shown.state == "pending" else None


def notes(log: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def daemon(folder: Path, fake: FakeClaude, synced: bool = False, **settings: object) -> Daemon:
    if synced:
        (folder / ".stfolder").mkdir()  # Syncthing's marker
    return Daemon(
        [folder],
        fake.settings(settle_step=0.1, settle_max=1.0, **settings),
        environ=fake.env,
        rescan_interval=0.5,
    )


# -- the trusted list in the user's config ---------------------------------------------------


def test_trust_keeps_the_rest_of_the_config_and_lists_what_it_added(tmp_path: Path) -> None:
    config = config_path()
    config.write_text('# mine\nmodel = "opus"  # keep\n\n[agents.x]\ncommand = ["x"]\n')
    folder = tmp_path / "notes"
    folder.mkdir()
    assert trust_folder(folder) == (folder.resolve(), True)
    assert trust_folder(folder) == (folder.resolve(), False)
    text = config.read_text()
    assert "# mine" in text and 'model = "opus"  # keep' in text
    assert Settings.model_validate(__import__("tomllib").loads(text)).trusted == (
        str(folder.resolve()),
    )
    assert trusted_list() == [str(folder.resolve())]


def test_trust_command_adds_lists_and_removes(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    run = CliRunner().invoke
    assert run(cli, ["trust", str(folder)]).exit_code == 0
    listed = run(cli, ["trust", "--list"])
    assert listed.output.splitlines() == [str(folder.resolve())]
    assert run(cli, ["trust", "--remove", str(folder)]).exit_code == 0
    assert run(cli, ["trust", "--list"]).output == ""
    again = run(cli, ["trust", "--remove", str(folder)])
    assert again.exit_code == 1 and "is not trusted" in again.output
    missing = run(cli, ["trust", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and "is not a folder" in missing.output


def test_a_broken_trusted_entry_is_named(tmp_path: Path) -> None:
    config_path().write_text("trusted = 3\n")
    with pytest.raises(AgentdocError, match="`trusted` must be a list"):
        trusted_list()


def test_trust_covers_the_folder_and_below_only(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "ab").mkdir()
    trusted = [str(tmp_path / "a")]
    assert covers(trusted, tmp_path / "a" / "b" / "chat.md")
    assert covers(trusted, tmp_path / "a")
    assert not covers(trusted, tmp_path / "ab" / "chat.md")
    assert not covers(trusted, tmp_path / "chat.md")


def test_a_running_daemon_reads_the_list_again_when_the_file_changes(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    listed = TrustList((), config)
    assert not listed.refresh() and not listed.folders
    config.write_text('trusted = ["/x"]\n')
    assert listed.refresh()
    assert listed.folders == ("/x",)
    config.write_text("trusted = [\n")  # half-written: what was trusted stays
    assert not listed.refresh() and listed.folders == ("/x",)


# -- the budget ------------------------------------------------------------------------------


def test_the_budget_counts_the_last_hour() -> None:
    started = deque([0.0, 10.0, 20.0])
    assert budget_wait(started, 0, 30.0) == 0.0
    assert budget_wait(started, 4, 30.0) == 0.0
    assert budget_wait(started, 3, 30.0) == HOUR - 30.0
    assert budget_wait(started, 2, 30.0) == HOUR + 10.0 - 30.0
    assert budget_wait(started, 3, HOUR + 5.0) == 0.0 and list(started) == [10.0, 20.0]


# -- the daemon ------------------------------------------------------------------------------


def test_an_untrusted_synced_folder_holds_until_trusted(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with Running(daemon(folder, plain_claude, synced=True, claim_wait=0)):
        doc.write_text(DOC + "hi from the phone\n")
        wait_for(lambda: "does not trust" in (held_why(doc) or ""), what="the held status")
        assert f"`agentdoc trust {folder}`" in (held_why(doc) or "")
        assert plain_claude.calls() == []
        assert CliRunner().invoke(cli, ["trust", str(folder)]).exit_code == 0
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    assert [c["stdin"] for c in plain_claude.calls()] == ["hi from the phone"]


def test_a_folder_that_is_not_synced_needs_no_trust(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    with Running(daemon(folder, plain_claude)):
        doc.write_text(DOC + "hi\n")
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")


def test_the_budget_holds_the_extra_prompt_until_the_hour_moves_on(
    folder: Path, tmp_path: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    log = tmp_path / "notes.jsonl"
    script = tmp_path / "note.py"
    script.write_text(NOTE)
    made = daemon(
        folder, plain_claude, max_turns_per_hour=1, notify=(sys.executable, str(script), str(log))
    )
    now = [1000.0]
    made.gate.clock = lambda: now[0]
    with Running(made):
        doc.write_text(DOC + "first\n")
        wait_for(lambda: len(roles(doc)) == 3, what="the first reply")
        doc.write_text(doc.read_text() + "second\n")
        wait_for(lambda: "max_turns_per_hour" in (held_why(doc) or ""), what="the held status")
        assert len(plain_claude.calls()) == 1
        now[0] += HOUR
        wait_for(lambda: len(roles(doc)) == 5, what="the second reply")
        wait_for(lambda: len(notes(log)) == 3, what="three notifications")
    events = [(n["AGENTDOC_EVENT"], n["AGENTDOC_TURN"]) for n in notes(log)]
    assert events == [("done", "1"), ("held", "0"), ("done", "2")]
    assert all(n["AGENTDOC_DOCUMENT"] == str(doc) for n in notes(log))
    assert "max_turns_per_hour" in notes(log)[1]["AGENTDOC_SUMMARY"]


# -- notify ----------------------------------------------------------------------------------


def progress(path: Path, state: str, detail: str = "") -> Progress:
    return Progress(path, 2, state, 0.0, 0, None, detail)


def test_notify_tells_each_event_once_and_a_waiting_turn_once(tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    script = tmp_path / "note.py"
    script.write_text(NOTE)
    notifier = Notifier((sys.executable, str(script), str(log)))
    doc = tmp_path / "chat.md"
    for state in ["starting", "streaming", "waiting", "waiting", "streaming", "failed", "failed"]:
        notifier.observe(progress(doc, state, "Bash: rm -rf build" if state != "failed" else "x"))
    notifier.close(grace=30)
    assert [n["AGENTDOC_EVENT"] for n in notes(log)] == ["waiting", "failed"]
    assert notes(log)[0]["AGENTDOC_SUMMARY"] == "a tool waits for approval: Bash: rm -rf build"


def test_a_notify_command_that_fails_or_hangs_is_only_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    hang = Notifier((sys.executable, "-c", "import time; time.sleep(60)"), timeout=0.5)
    hang.tell("done", tmp_path / "a.md", 1, "ok")
    hang.close(grace=30)
    missing = Notifier((str(tmp_path / "no-such-program"),))
    missing.tell("done", tmp_path / "a.md", 1, "ok")
    missing.close(grace=30)
    assert "was stopped" in caplog.text and "cannot run" in caplog.text


def test_a_summary_is_one_short_line() -> None:
    assert one_line("\n\n  First line.  \nsecond") == "First line."
    assert len(one_line("x" * 500)) == 160


def test_notify_must_name_a_program() -> None:
    with pytest.raises(ValueError, match="program to run"):
        Settings.model_validate({"notify": [" "]})


# -- one machine answers a synced document ---------------------------------------------------


def test_the_highest_epoch_owns_and_a_tie_goes_to_the_lowest_id() -> None:
    assert owner([]) is None
    found = owner([Claim("b", "hb", 1), Claim("a", "ha", 1), Claim("c", "hc", 0)])
    assert found is not None and found.machine == "a"
    found = owner([Claim("b", "hb", 2), Claim("a", "ha", 1)])
    assert found is not None and found.machine == "b"


def test_a_conflict_copy_of_a_claim_is_no_claim(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    write_claim(doc, Claim("aaaa", "desk-a", 1))
    copy = tmp_path / ".agentdoc-claims" / "chat.md.aaaa.sync-conflict-20261125-1.json"
    copy.write_text('{"machine": "zzzz", "host": "x", "epoch": 9}')
    (tmp_path / ".agentdoc-claims" / "chat.md.bbbb.json").write_text("{half")
    assert read_claims(doc) == [Claim("aaaa", "desk-a", 1)]


def test_a_new_document_waits_for_a_rival_claim_and_yields_to_the_lower_id(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "chat.md"
    now = [0.0]
    mine = Claims("bbbb", "desk-b", wait=5.0, clock=lambda: now[0])
    why, quiet = mine.why_not(doc)
    assert why is not None and quiet and read_claims(doc) == [Claim("bbbb", "desk-b", 1)]
    write_claim(doc, Claim("aaaa", "desk-a", 1))  # the rival's claim arrives through the sync
    now[0] = 6.0
    why, quiet = mine.why_not(doc)
    assert why is not None and not quiet and "desk-a (aaaa) answers" in why
    assert read_claims(doc) == [Claim("aaaa", "desk-a", 1)]  # ours taken back
    theirs = Claims("aaaa", "desk-a", wait=5.0, clock=lambda: now[0])
    assert theirs.why_not(doc) == (None, False)


def test_another_machine_s_document_waits_for_adopt(
    folder: Path, doc: Path, plain_claude: FakeClaude
) -> None:
    write_claim(doc, Claim("aaaa", "desk-a", 1))
    trust_folder(folder)
    with Running(daemon(folder, plain_claude, synced=True)):
        doc.write_text(DOC + "hi\n")
        wait_for(lambda: "desk-a (aaaa) answers" in (held_why(doc) or ""), what="the hold")
        assert f"agentdoc adopt {doc}" in (held_why(doc) or "")
        assert plain_claude.calls() == []
        adopted = CliRunner().invoke(cli, ["adopt", str(doc)])
        assert adopted.exit_code == 0, adopted.output
        wait_for(lambda: roles(doc) == ["user", "assistant", "user"], what="the reply")
    mine = owner(read_claims(doc))
    assert mine is not None and mine.machine == machine_id() and mine.epoch == 2


def test_init_sync_keeps_local_state_out_once(tmp_path: Path) -> None:
    synced = tmp_path / "synced"
    (synced / ".stfolder").mkdir(parents=True)
    (synced / ".stignore").write_text("(?d).DS_Store")
    run = CliRunner().invoke
    first = run(cli, ["init-sync", str(synced)])
    assert first.exit_code == 0 and "added .agentdoc" in first.output
    assert run(cli, ["init-sync", str(synced)]).output.endswith("already set\n")
    lines = (synced / ".stignore").read_text().splitlines()
    assert lines[0] == "(?d).DS_Store" and lines.count(".agentdoc") == 1
    bare = tmp_path / "bare"
    bare.mkdir()
    refused = run(cli, ["init-sync", str(bare)])
    assert refused.exit_code == 1 and "no sync tool found" in refused.output


def test_a_held_prompt_is_told_once_per_kind_of_reason(tmp_path: Path) -> None:
    gate = Gate(TrustList((), tmp_path / "c.toml"), 1, lambda _p: None)
    doc = tmp_path / "chat.md"
    assert gate.hold(doc, Held("claiming", "claiming", quiet=True)) == (True, False)
    assert gate.hold(doc, Held("desk-a answers", "owner")) == (True, True)
    assert gate.hold(doc, Held("desk-a answers", "owner")) == (False, False)
    assert gate.hold(doc, Held("budget: 3 min", "budget")) == (True, True)
    assert gate.hold(doc, Held("budget: 2 min", "budget")) == (True, False)
    gate.started(doc)
    assert gate.hold(doc, Held("budget: 60 min", "budget")) == (True, True)


def test_another_machine_s_streaming_reply_is_never_closed_here(
    folder: Path, plain_claude: FakeClaude
) -> None:
    """What a desktop that does not answer a document sees while the one that does streams."""
    doc = folder / "chat.md"
    prompt = DOC + "hi\n"
    streaming = open_reply(prompt, len(prompt), new_nonce())
    doc.write_text(streaming)  # as found at start-up
    write_claim(doc, Claim("aaaa", "desk-a", 1))
    trust_folder(folder)
    with Running(daemon(folder, plain_claude, synced=True, claim_wait=0), discovered=True):
        grown = streaming.replace("<!-- agentdoc:end", "Half a reply\n<!-- agentdoc:end", 1)
        doc.write_text(grown)  # the next version arrives through the sync
        # A later prompt in another document of the folder: once it is answered, the change
        # above has long been handled.
        (folder / "later.md").write_text(DOC + "later\n")
        wait_for(lambda: len(roles(folder / "later.md")) == 3, what="the later reply")
    assert doc.read_text() == grown and open_regions(grown)
    assert [c["stdin"] for c in plain_claude.calls()] == ["later"]


def test_adopt_refuses_a_document_no_other_machine_can_answer(tmp_path: Path) -> None:
    doc = tmp_path / "chat.md"
    doc.write_text(DOC)
    refused = CliRunner().invoke(cli, ["adopt", str(doc)])
    assert refused.exit_code == 1 and "is not in a synced folder" in refused.output
    assert not (tmp_path / ".agentdoc-claims").exists()


def test_init_sync_knows_rclone_and_unison(tmp_path: Path) -> None:
    """Neither leaves a marker in the folder, so they are named with --tool: rclone reads its
    filters from a file it is told about, unison from the profile (the lines are shown)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    run = CliRunner().invoke
    rclone = run(cli, ["init-sync", str(folder), "--tool", "rclone"])
    assert rclone.exit_code == 0, rclone.output
    filters = folder / ".agentdoc.rclone-filters"
    assert {"- .agentdoc/**", "- .agentdoc-tmp-*"} <= set(filters.read_text().splitlines())
    assert f"--filters-file {filters}" in rclone.output
    assert "synced =" in rclone.output  # no marker: the config must say the folder is synced
    again = run(cli, ["init-sync", str(folder), "--tool", "rclone"])
    assert "already set" in again.output
    assert filters.read_text().count("- .agentdoc/**") == 1
    unison = run(cli, ["init-sync", str(folder), "--tool", "unison"])
    assert unison.exit_code == 0, unison.output
    assert "ignore = Name .agentdoc" in unison.output
    assert "ignore = Name .agentdoc-tmp-*" in unison.output
    assert ".prf" in unison.output
    bare = run(cli, ["init-sync", str(folder)])
    assert bare.exit_code == 1 and "--tool rclone" in bare.output
