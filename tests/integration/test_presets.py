"""Presets: markdown files of settings a document starts from, and what they may never set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli
from agentdoc.document import parser as document
from agentdoc.errors import PromptRefused
from agentdoc.turn import load_preset, presets_dir
from agentdoc.turn.presets import apply_preset, first_prompt
from tests.support.documents import chat_in
from tests.support.fake_claude import FakeClaude

REVIEWER = """---
description: Careful code review
model: opus
effort: high
include: [CONTRIBUTING.md]
---
You review code. Name the file and line of each problem.
"""


def write_preset(name: str, text: str) -> Path:
    folder = presets_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text)
    return path


def doc_with(meta: str, body: str = "## User\n\nHi\n") -> document.Document:
    return document.parse(f"---\nagentdoc: {meta}\n---\n\n{body}")


def test_presets_live_beside_the_config_file(tmp_path: Path) -> None:
    assert presets_dir() == tmp_path / "presets"


def test_a_preset_fills_in_what_the_document_leaves_out() -> None:
    write_preset("reviewer", REVIEWER)
    doc, include = apply_preset(doc_with("{preset: reviewer, model: sonnet}"))
    assert doc.meta.model == "sonnet"  # the document's own key wins
    assert doc.meta.effort == "high"
    assert doc.meta.system == "You review code. Name the file and line of each problem."
    assert include == ("CONTRIBUTING.md",)
    assert first_prompt("Hi", doc, include) == '@"CONTRIBUTING.md"\n\nHi'
    answered = doc_with("{preset: reviewer}", "## User\n\nHi\n\n## Assistant\n\nYes.\n\n## User\n")
    assert first_prompt("Again", answered, include) == "Again"  # only the first prompt
    # A document's own system prompt replaces the preset's body.
    own, _ = apply_preset(doc_with("{preset: reviewer, system: Be brief.}"))
    assert own.meta.system == "Be brief."


@pytest.mark.parametrize(
    "key", ["permission_mode", "allowed_tools", "add_dirs", "command", "trust", "cwd", "session"]
)
def test_a_preset_can_never_set_what_only_the_user_may(key: str) -> None:
    write_preset("sneaky", f"---\nmodel: sonnet\n{key}: x\n---\nbody\n")
    with pytest.raises(PromptRefused, match=f"`{key}` is not something a preset may set"):
        load_preset("sneaky")


@pytest.mark.parametrize("name", ["../config", "a/b", ".hidden", "", "x y", "-rf"])
def test_a_preset_name_is_a_file_name_not_a_path(name: str) -> None:
    with pytest.raises(PromptRefused, match="not a path"):
        load_preset(name)


def test_bad_values_and_missing_presets_are_refused_by_name() -> None:
    with pytest.raises(PromptRefused, match=r"no .*nowhere\.md"):
        load_preset("nowhere")
    write_preset("flagged", "---\nmodel: --dangerous\n---\n")
    with pytest.raises(PromptRefused, match="`model`"):
        load_preset("flagged")
    write_preset("broken", "---\nmodel: [unclosed\n---\n")
    with pytest.raises(PromptRefused, match="not YAML"):
        load_preset("broken")


def test_new_with_a_preset_sends_its_settings_and_files(
    tmp_path: Path, claude_on_path: FakeClaude
) -> None:
    write_preset("reviewer", REVIEWER)
    (tmp_path / "CONTRIBUTING.md").write_text("Tabs, never spaces.\n")
    path = tmp_path / "review.md"
    runner = CliRunner()
    made = runner.invoke(cli, ["new", "--preset", "reviewer", str(path)])
    assert made.exit_code == 0, made.output
    assert document.parse(path.read_text()).meta.preset == "reviewer"
    result = runner.invoke(cli, ["ask", str(path), "Review main.py"])
    assert result.exit_code == 0, result.output
    [call] = claude_on_path.calls()
    assert "--model=opus" in call["argv"] and "--effort=high" in call["argv"]
    assert any(a.startswith("--append-system-prompt=You review code.") for a in call["argv"])
    assert "Tabs, never spaces." in call["stdin"] and "Review main.py" in call["stdin"]


def test_a_missing_preset_is_refused_in_the_document(
    tmp_path: Path, claude_on_path: FakeClaude
) -> None:
    path = tmp_path / "chat.md"
    path.write_text("---\nagentdoc: {preset: gone}\n---\n\n## User\n\nHi\n")
    result = CliRunner().invoke(cli, ["run", str(path)])
    assert result.exit_code != 0 and "preset 'gone'" in result.output
    assert claude_on_path.calls() == []
    text = path.read_text()
    assert "**Not sent:** preset 'gone'" in text
    assert document.parse(text).pending_prompt() == "Hi"
    status = json.loads((tmp_path / ".agentdoc" / "chat.md.status.json").read_text())
    assert "preset 'gone'" in status["error"]


def test_new_refuses_a_preset_that_cannot_work(tmp_path: Path) -> None:
    write_preset("sneaky", "---\npermission_mode: bypassPermissions\n---\n")
    result = CliRunner().invoke(cli, ["new", "--preset", "sneaky", str(tmp_path / "x.md")])
    assert result.exit_code == 1 and "`permission_mode`" in result.output
    assert not (tmp_path / "x.md").exists()


def test_presets_lists_each_with_its_description_or_problem() -> None:
    runner = CliRunner()
    assert "no presets yet" in runner.invoke(cli, ["presets"]).output
    write_preset("reviewer", REVIEWER)
    write_preset("sneaky", "---\ncommand: [rm]\n---\n")
    lines = runner.invoke(cli, ["presets"]).output.splitlines()
    assert lines[0].split(None, 1) == ["reviewer", "Careful code review"]
    assert lines[1].startswith("sneaky") and "`command`" in lines[1]


def test_the_daemon_refuses_a_missing_preset_in_the_document(
    tmp_path: Path, claude_on_path: FakeClaude
) -> None:
    from tests.support.daemon import Running, make_daemon
    from tests.support.processes import state_of
    from tests.support.waiting import wait_for

    path = chat_in(tmp_path / "docs", "---\nagentdoc: {preset: gone}\n---\n\n## User\n\n")
    folder = path.parent
    with Running(make_daemon(folder, claude_on_path)):
        path.write_text(path.read_text() + "Hi\n")
        wait_for(lambda: "**Not sent:**" in path.read_text(), what="the refusal in the document")
        wait_for(lambda: state_of(path) == "error", what="the refusal in the status")
    assert claude_on_path.calls() == []
    assert (
        "preset 'gone'"
        in json.loads((folder / ".agentdoc" / "chat.md.status.json").read_text())["error"]
    )
