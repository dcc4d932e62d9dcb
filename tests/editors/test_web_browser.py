"""The web page in a real browser at a phone's size, with a real `agentdoc watch --serve`
process behind it (the replaying fake claude here; the real CLI in test_e2e_web.py). The
page is driven only through its accessible names: the `Prompt` box, the buttons `Send`,
`Allow`, `Deny`, `Cancel`, `New document`, and each document's link named by its path."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.fake_claude import FakeClaude
from tests.support.processes import base_env, run_cli, state_of, write_quick_config
from tests.support.waiting import wait_for
from tests.support.web import phone, served_to_chromium, status_of

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.timeout(180)

DOC = "---\nagentdoc: {}\n---\n# Chat\n\n## User\n\n"


def environ(tmp_path: Path, fake: FakeClaude, **settings: float | str | bool) -> dict[str, str]:
    config = write_quick_config(
        tmp_path / "config.toml",
        warm_sessions=0,  # the replaying fake is one-shot
        **settings,
    )
    return base_env(
        tmp_path / "home",
        **fake.env,
        AGENTDOC_CLAUDE=str(fake.executable),
        AGENTDOC_CONFIG=str(config),
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "notes").mkdir(parents=True)
    (docs / "notes" / "chat.md").write_text(DOC)
    return docs


@pytest.fixture
def served(
    tmp_path: Path, folder: Path, fake_claude: Callable[..., FakeClaude]
) -> Callable[..., AbstractContextManager[tuple[str, Browser]]]:
    """The folder served by `agentdoc watch` with the fake `claude` made of the arguments (`extra`:
    more of watch's options), and a Chromium: the page's address, the browser."""

    def serve(
        *fake: object, extra: Sequence[str] = (), **kwargs: object
    ) -> AbstractContextManager[tuple[str, Browser]]:
        env = environ(tmp_path, fake_claude(*fake, **kwargs))
        return served_to_chromium(folder, env, tmp_path / "watch.log", extra)

    return serve


def test_open_send_and_watch_the_reply_stream_in(
    folder: Path, served: Callable[..., AbstractContextManager[tuple[str, Browser]]]
) -> None:
    doc = folder / "notes" / "chat.md"
    with served("long_stream.ndjson", delay="0.003") as (url, browser):
        page = phone(browser)
        page.goto(url + "/")
        page.get_by_role("link", name="notes/chat.md").click()
        page.get_by_label("Prompt").fill("Count for me, please.")
        page.get_by_role("button", name="Send").click()
        # Seen while it streams: part of the reply, and the state saying so.
        page.locator("#tail").get_by_text(re.compile(r"\bw300\b")).wait_for()
        seen_streaming = page.locator("#state").inner_text()
        page.locator("#tail").get_by_text(re.compile(r"\bw1999\b")).wait_for()
        wait_for(lambda: state_of(doc) == "idle", "the turn's end")
        page.locator("#state").get_by_text("idle").wait_for()
        assert seen_streaming.startswith("streaming"), seen_streaming
        assert "Count for me, please." in doc.read_text()
        # The list tells the document's state beside its link.
        page.goto(url + "/")
        row = page.get_by_role("listitem").filter(
            has=page.get_by_role("link", name="notes/chat.md")
        )
        assert "idle" in row.inner_text()


def test_cancel_stops_a_streaming_reply(
    folder: Path, served: Callable[..., AbstractContextManager[tuple[str, Browser]]]
) -> None:
    doc = folder / "notes" / "chat.md"
    doc.write_text(DOC + "Count.\n")
    fake = {"delay": "0.003", "hang_after": "300"}
    with served("long_stream.ndjson", extra=["--send-pending"], **fake) as (url, browser):
        page = phone(browser)
        page.goto(url + "/d/0/notes/chat.md")
        page.locator("#tail").get_by_text(re.compile(r"\bw200\b")).wait_for()
        page.get_by_role("button", name="Cancel").click()
        wait_for(lambda: state_of(doc) not in ("streaming", "waiting"), "the cancel")
        page.get_by_role("button", name="Cancel").wait_for(state="hidden")
    assert "interrupted" in doc.read_text().lower()


def test_a_wrong_token_gets_401_and_a_path_out_gets_404(
    tmp_path: Path, folder: Path, fake_claude: Callable[..., FakeClaude]
) -> None:
    env = environ(tmp_path, fake_claude("plain_text.ndjson"))
    (tmp_path / "secret.md").write_text(DOC + "not for the page\n")
    (folder / "out.md").symlink_to(tmp_path / "secret.md")
    token = run_cli(["serve-token"], env).stdout.strip()
    assert len(token) > 20
    with served_to_chromium(folder, env, tmp_path / "watch.log", ["--token"]) as (url, browser):
        page = phone(browser)
        assert status_of(page, url + "/") == 401
        assert status_of(page, url + "/?token=wrong") == 401
        assert status_of(page, url + f"/?token={token}") == 200
        assert "token" not in page.url  # the cookie carries it from here
        page.get_by_role("link", name="notes/chat.md").click()
        page.get_by_label("Prompt").wait_for()
        for out in (
            "/d/0/..%2F..%2Fsecret.md",
            "/d/0/%2e%2e/secret.md",
            "/d/0/out.md",
            "/d/0/notes/..%2F..%2F..%2Fsecret.md",
        ):
            answer = page.goto(url + out)
            assert answer is not None and answer.status == 404, out
            assert "not for the page" not in page.content()
        other = phone(browser)  # another browser, without the cookie
        assert status_of(other, url + "/d/0/notes/chat.md") == 401


def test_two_browsers_and_an_editor_writing_at_once_lose_nothing(
    folder: Path, served: Callable[..., AbstractContextManager[tuple[str, Browser]]]
) -> None:
    doc = folder / "notes" / "chat.md"
    with served("long_stream.ndjson", delay="0.003") as (url, browser):
        one, two = phone(browser), phone(browser)
        for page in (one, two):
            page.goto(url + "/d/0/notes/chat.md")
        one.get_by_label("Prompt").fill("First prompt, from one.")
        one.get_by_role("button", name="Send").click()
        two.locator("#tail").get_by_text(re.compile(r"\bw100\b")).wait_for()
        # While the reply streams: both browsers send, and an editor saves a note at the top.
        one.get_by_label("Prompt").fill("Queued from one.")
        two.get_by_label("Prompt").fill("Queued from two.")
        one.get_by_role("button", name="Send").click()
        two.get_by_role("button", name="Send").click()
        # The editor saves once it has the pages' prompts (it reloaded). Read before they land,
        # its copy is older than them, and its save replaces them like any second editor's.
        wait_for(lambda: "Queued from two." in doc.read_text(), "the second page's prompt")
        wait_for(lambda: "Queued from one." in doc.read_text(), "the first page's prompt")
        text = doc.read_text()
        doc.write_text(text.replace("# Chat\n", "# Chat\n\nA note typed in the editor.\n", 1))
        wait_for(
            lambda: doc.read_text().count("w1999.") == 2 and state_of(doc) == "idle",
            "both turns to end",
            timeout=90,
        )
    final = doc.read_text()
    for typed in (
        "First prompt, from one.",
        "Queued from one.",
        "Queued from two.",
        "A note typed in the editor.",
    ):
        assert final.count(typed) == 1, (typed, final[-3000:])


def test_new_document_then_a_prompt_in_it(
    folder: Path, served: Callable[..., AbstractContextManager[tuple[str, Browser]]]
) -> None:
    with served("plain_text.ndjson") as (url, browser):
        page = phone(browser)
        page.goto(url + "/")
        page.get_by_label("Name").fill("from-phone")
        page.get_by_role("button", name="New document").click()
        page.get_by_label("Prompt").fill("Hello from the phone.")
        page.get_by_role("button", name="Send").click()
        made = folder / "from-phone.md"
        wait_for(lambda: made.exists() and "## Assistant" in made.read_text(), "the reply")
        wait_for(lambda: state_of(made) == "idle", "the turn's end")
        page.locator("#state").get_by_text("idle").wait_for()
    assert "Hello from the phone." in made.read_text()
