"""The web page with the real Claude Code CLI behind the daemon (against the offline API), in
a real browser at a phone's size: a prompt sent from the page, a tool's permission request
shown with its tool and input, answered with Allow, then another with Deny and a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentdoc.agents.fakeapi import FakeMessagesAPI
from tests.support.claude_watch import DOC, warm_env
from tests.support.messages import result_text, said, tool_results, write
from tests.support.processes import state_of
from tests.support.waiting import wait_for
from tests.support.web import chromium, phone, serving

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]


def test_a_permission_request_answered_from_the_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    doc = docs / "chat.md"
    doc.write_text(DOC)
    first, second = docs / "first.txt", docs / "second.txt"
    script = [write(first, "one\n"), said("Wrote it."), write(second, "two\n"), said("Fine.")]
    with FakeMessagesAPI(script) as api:
        env = warm_env(tmp_path, api)
        with serving(docs, env, tmp_path / "watch.log") as (_d, url), chromium() as browser:
            page = phone(browser)
            page.goto(url + "/")
            page.get_by_role("link", name="chat.md").click()
            page.get_by_label("Prompt").fill("Write the first file, please.")
            page.get_by_role("button", name="Send").click()
            asked = page.get_by_role("region", name="Permission request")
            asked.get_by_role("button", name="Allow").wait_for()
            shown = asked.inner_text()
            assert "Write" in shown and "first.txt" in shown, shown
            asked.get_by_role("button", name="Allow").click()
            page.locator("#tail").get_by_text("Wrote it.").wait_for()
            wait_for(lambda: state_of(doc) == "idle", "the first turn's end")
            assert first.read_text() == "one\n"

            page.get_by_label("Prompt").fill("And the second one.")
            page.get_by_role("button", name="Send").click()
            asked.get_by_role("button", name="Deny").wait_for()
            asked.get_by_label("Reason").fill("not that file today")
            asked.get_by_role("button", name="Deny").click()
            page.locator("#tail").get_by_text("Fine.").wait_for()
            wait_for(lambda: state_of(doc) == "idle", "the second turn's end")
            page.get_by_role("button", name="Allow").wait_for(state="detached")
        refused = tool_results(api)[-1]
    assert not second.exists()
    assert "not that file today" in result_text(refused)
    text = doc.read_text()
    assert "allowed in the document" in text and "denied in the document" in text
