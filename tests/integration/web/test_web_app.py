"""The web page's routes, through Starlette's TestClient: who may ask, which files it shows,
and the edits it makes (each as an editor's save of the document)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from agentdoc.document import read_answer, render_approval
from agentdoc.records import Status, now_iso, write_status
from agentdoc.web.app import Site, make_app
from agentdoc.web.places import roots_of

DOC = "---\nagentdoc: {}\n---\n# Chat\n\n## User\n\n"
LOCAL = "http://127.0.0.1:8765"
SAME = {"origin": LOCAL}


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(DOC)
    (folder / "sub" / "b.md").write_text(DOC + "Hello?\n")
    (folder / "plain.md").write_text("# just notes\n")
    (tmp_path / "secret.md").write_text(DOC + "outside\n")
    return folder


def site_for(folder: Path, **kwargs: object) -> Site:
    documents = sorted(p for p in folder.rglob("*.md") if "agentdoc:" in p.read_text())
    return Site(roots_of([folder]), lambda: documents, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def client(docs: Path) -> Iterator[TestClient]:
    with TestClient(make_app(site_for(docs), token=None), base_url=LOCAL) as c:
        yield c


def test_the_list_links_each_document_by_its_path_below_the_root(client: TestClient) -> None:
    page = client.get("/").text
    assert '<a href="/d/0/a.md">a.md</a>' in page
    assert '<a href="/d/0/sub/b.md">sub/b.md</a>' in page
    assert "plain.md" not in page and "New document" in page


@pytest.mark.parametrize(
    "url",
    [
        "/d/0/../secret.md",
        "/d/0/..%2Fsecret.md",
        "/d/0/%2e%2e/secret.md",
        "/d/0/sub/..%2F..%2Fsecret.md",
        "/d/0/%252e%252e/secret.md",
        "/d/0//etc/passwd",
        "/d/0/.agentdoc/a.md.status.json",
        "/d/0/plain.md",
        "/d/1/a.md",
        "/d/0/missing.md",
        "/d/0/link.md",
        "/d/0/linked/secret.md",
        "/events/0/..%2Fsecret.md",
    ],
)
def test_nothing_outside_the_watched_documents_is_served(
    client: TestClient, docs: Path, url: str
) -> None:
    (docs / "link.md").symlink_to(docs.parent / "secret.md")
    (docs / "linked").symlink_to(docs.parent)
    answer = client.get(url)
    assert answer.status_code == 404, url
    assert "outside" not in answer.text


def test_a_document_is_rendered_without_running_anything_it_holds(
    client: TestClient, docs: Path
) -> None:
    (docs / "a.md").write_text(
        DOC + "<script>alert(1)</script> <button>Allow</button>\n\n> [!WARNING]\n> careful\n"
    )
    page = client.get("/d/0/a.md").text
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "<button>Allow</button>" not in page
    assert 'class="callout callout-warning"' in page
    assert '<textarea id="prompt" name="prompt"' in page and '<label for="prompt">Prompt' in page
    headers = client.get("/d/0/a.md").headers
    assert "script-src 'self'" in headers["content-security-policy"]


def test_send_appends_the_prompt_under_the_last_user_heading(
    client: TestClient, docs: Path
) -> None:
    answer = client.post("/d/0/a.md/prompt", data={"prompt": "Why?\r\nTell me."}, headers=SAME)
    assert answer.status_code == 200  # followed the redirect back to the document
    assert (docs / "a.md").read_text() == DOC + "Why?\nTell me.\n"
    client.post("/d/0/sub/b.md/prompt", data={"prompt": "More."}, headers=SAME)
    assert (docs / "sub" / "b.md").read_text() == DOC + "Hello?\n\nMore.\n"


def test_send_below_a_reply_opens_a_new_user_block_with_the_marker(docs: Path) -> None:
    doc = docs / "a.md"
    doc.write_text(DOC.replace("{}", "{trigger: marker}") + "Q\n\n## Assistant\n\nA\n")
    site = site_for(docs, marker="/send")
    with TestClient(make_app(site, token=None), base_url=LOCAL) as client:
        client.post("/d/0/a.md/prompt", data={"prompt": "Next"}, headers=SAME)
    assert doc.read_text().endswith("## Assistant\n\nA\n\n## User\n\nNext\n/send\n")


def test_a_write_from_another_site_is_refused(client: TestClient, docs: Path) -> None:
    for headers in ({}, {"origin": "http://evil.example"}, {"origin": "null"}):
        answer = client.post("/d/0/a.md/prompt", data={"prompt": "x"}, headers=headers)
        assert answer.status_code == 403
    assert (docs / "a.md").read_text() == DOC


def test_without_a_token_only_loopback_names_are_answered(docs: Path) -> None:
    app = make_app(site_for(docs), token=None)
    with TestClient(app, base_url="http://rebound.example:8765") as client:
        assert client.get("/").status_code == 403
    for local in ("http://localhost:8765", "http://127.0.0.2:8765", "http://[::1]:8765"):
        with TestClient(app, base_url=local) as client:
            assert client.get("/").status_code == 200, local


def test_a_token_is_asked_for_and_kept_in_a_strict_cookie(docs: Path) -> None:
    app = make_app(site_for(docs), token="s3cret")
    with TestClient(app, base_url="http://192.0.2.1:8765") as client:
        assert client.get("/").status_code == 401
        assert client.get("/?token=wrong").status_code == 401
        first = client.get("/d/0/a.md?token=s3cret", follow_redirects=False)
        assert first.status_code == 303 and first.headers["location"] == "/d/0/a.md"
        cookie = first.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert client.get("/d/0/a.md").status_code == 200  # the cookie now


def test_allow_and_deny_tick_the_box_in_the_document(client: TestClient, docs: Path) -> None:
    doc = docs / "a.md"
    block = render_approval("Write", {"file_path": "/x/out.txt"}, "feedbeef")
    doc.write_text(DOC + "Q\n\n## Assistant\n\n" + block + "\n")
    page = client.get("/d/0/a.md").text
    assert "Permission: Write" in page and "/x/out.txt" in page
    client.post("/d/0/a.md/answer", data={"behavior": "deny", "reason": "not there"}, headers=SAME)
    answer = read_answer(doc.read_text(), "feedbeef")
    assert answer is not None and (answer.behavior, answer.message) == ("deny", "not there")
    doc.write_text(DOC + "Q\n\n## Assistant\n\n" + block + "\n")
    client.post("/d/0/a.md/answer", data={"behavior": "allow"}, headers=SAME)
    answer = read_answer(doc.read_text(), "feedbeef")
    assert answer is not None and answer.behavior == "allow"


def test_cancel_asks_the_turn_to_stop(client: TestClient, docs: Path) -> None:
    doc = docs / "a.md"
    assert client.post("/d/0/a.md/cancel", headers=SAME).status_code == 409
    write_status(doc, Status(document="a.md", state="streaming", updated=now_iso()))
    assert client.post("/d/0/a.md/cancel", headers=SAME).status_code == 200
    assert (docs / ".agentdoc" / "a.md.cancel").exists()


def test_new_document_makes_a_session_document(client: TestClient, docs: Path) -> None:
    answer = client.post("/new", data={"name": "ideas"}, headers=SAME, follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/d/0/ideas.md"
    assert "agentdoc:" in (docs / "ideas.md").read_text()
    again = client.post("/new", data={"name": "ideas"}, headers=SAME, follow_redirects=False)
    assert again.status_code == 409  # never over an existing file


def test_read_only_offers_and_takes_no_edit(docs: Path) -> None:
    with TestClient(make_app(site_for(docs, read_only=True), token=None), base_url=LOCAL) as c:
        page = c.get("/d/0/a.md").text
        assert "Prompt" not in page and "Send" not in page and "New document" not in c.get("/").text
        assert c.post("/d/0/a.md/prompt", data={"prompt": "x"}, headers=SAME).status_code == 403
        assert c.post("/new", data={"name": "x"}, headers=SAME).status_code == 403
    assert (docs / "a.md").read_text() == DOC


def test_a_held_document_is_shown_held_and_never_answered_from_the_page(docs: Path) -> None:
    site = site_for(docs, untrusted=lambda _p: "a synced folder this machine does not trust")
    with TestClient(make_app(site, token=None), base_url=LOCAL) as client:
        assert "held: a synced folder" in client.get("/").text
        answer = client.post("/d/0/a.md/prompt", data={"prompt": "x"}, headers=SAME)
        assert answer.status_code == 409
    assert (docs / "a.md").read_text() == DOC


def test_the_search_box_finds_an_exchange_and_links_to_it(client: TestClient, docs: Path) -> None:
    (docs / "a.md").write_text(
        DOC + "Why does the borrow checker complain?\n\n## Assistant\n\nLifetimes.\n\n## User\n\n"
    )
    page = client.get("/", params={"q": "borrow"}).text
    assert '<a href="/d/0/a.md#turn-1">a.md#turn-1</a>' in page
    assert "Why does the borrow checker complain?" in page
    assert "Nothing found." in client.get("/", params={"q": "zebra"}).text
