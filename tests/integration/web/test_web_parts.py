"""The web page's pure parts: rendering by blocks, the live tail, and an edit that meets a
concurrent write."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.document import asked_in, read_answer, render_approval, tick
from agentdoc.records import state_file
from agentdoc.web import edits
from agentdoc.web.live import Hub
from agentdoc.web.render import Renderer, blocks, tail_start

DOC = "---\nagentdoc: {}\n---\n# Chat\n\n## User\n\n"


def test_blocks_split_at_blank_lines_outside_fences_and_indented_text() -> None:
    text = "a\n\n```\nx\n\ny\n```\n\n- item\n\n    code in item\n\nlast\n"
    assert blocks(text) == [
        "a\n\n",
        "```\nx\n\ny\n```\n\n",
        "- item\n\n    code in item\n\n",
        "last\n",
    ]
    assert "".join(blocks(text)) == text


def test_rendering_by_blocks_matches_rendering_whole() -> None:
    text = "# T\n\n> [!NOTE]\n> n\n\n<details><summary>🔧 Read</summary>\n\nbody\n\n</details>\n"
    html = Renderer().render(text)
    assert "<details><summary>🔧 Read</summary>\n<p>body</p>\n</details>" in html
    assert '<strong class="callout-title">Note</strong>' in html


def test_links_cannot_run_script() -> None:
    html = Renderer().render("[x](javascript:alert(1)) <img src=x onerror=alert(1)>\n")
    assert 'href="javascript' not in html and "<img" not in html


def test_the_tail_is_the_last_exchange() -> None:
    text = DOC + "Q1\n\n## Assistant\n\nA1\n\n## User\n\nQ2\n\n## Assistant\n\nA2…"
    assert text[tail_start(text) :] == "## User\n\nQ2\n\n## Assistant\n\nA2…"
    assert DOC[tail_start(DOC) :] == "## User\n\n"
    fenced = DOC + "```\n## Assistantish\n```\n"
    assert fenced[tail_start(fenced) :].startswith("## User")


@pytest.mark.parametrize("synced", [False, True], ids=["local", "synced"])
def test_status_writes_are_told_as_their_document(tmp_path: Path, synced: bool) -> None:
    """A followed document's status write wakes its page, wherever the status lives: beside
    it, or (a synced folder) in this machine's own state folder."""
    folder = tmp_path / "notes"
    folder.mkdir()
    if synced:
        (folder / ".stfolder").mkdir()
    doc = folder / "a.md"
    hub = Hub()
    hub.follow(doc)
    status = state_file(doc, ".status.json")
    assert (folder in status.parents) is not synced
    assert hub.document_of(status) == str(doc)
    assert hub.document_of(doc) == str(doc)


def test_an_edit_made_again_on_a_write_that_landed_meanwhile(tmp_path: Path) -> None:
    doc = tmp_path / "a.md"
    doc.write_text(DOC + "Q\n\n## Assistant\n\npart")
    prompt = edits.add_prompt("Next", None)
    landed: list[bool] = []

    def change(text: str) -> str:
        if not landed:  # a reply's flush lands between the page's read and its write
            landed.append(True)
            doc.write_text(text + " more of the reply")
        return prompt(text)

    edits.edit(doc, change)
    assert (
        doc.read_text() == DOC + "Q\n\n## Assistant\n\npart more of the reply\n\n## User\n\nNext\n"
    )


def test_a_prompt_made_again_on_a_flush_that_merged_it_is_not_added_twice(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "a.md"
    reply = DOC + "Q\n\n## Assistant\n\npart"
    doc.write_text(reply)
    prompt = edits.add_prompt("Next", None)
    merged = reply + " more and the rest\n\n## User\n\nNext\n"
    calls: list[str] = []

    def change(text: str) -> str:
        calls.append(text)
        if len(calls) == 1:  # a flush lands between the page's read and its write
            doc.write_text(text + " more")
        elif len(calls) == 2:  # the writer's next flush merged the page's write into it
            doc.write_text(merged)
        return prompt(text)

    edits.edit(doc, change)
    assert calls[-1] == merged
    assert doc.read_text() == merged


def test_tick_an_agents_own_options_by_their_names() -> None:
    block = render_approval("edit", {"path": "x"}, "abcd", options=["Allow once", "Reject"])
    assert [a.options for a in asked_in(block)] == [("Allow once", "Reject")]
    ticked = tick(block, "abcd", "deny", "no")
    assert ticked is not None and "> - [x] Reject\n> no" in ticked
    answer = read_answer(ticked, "abcd", ["allow_once", "reject_once"])
    assert answer is not None and (answer.behavior, answer.message) == ("deny", "no")
    odd = render_approval("edit", {}, "ef01", options=["Proceed", "Stop"])
    assert tick(odd, "ef01", "allow") is None
