"""`agentdoc search`: full text over documents, archives and sidecars, one hit per exchange."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agentdoc.cli import cli
from agentdoc.search import connect, key, search
from agentdoc.search.exchanges import exchanges
from agentdoc.search.query import fts_query
from tests.support.conversations import conversation
from tests.support.daemon import Running, make_daemon
from tests.support.fake_claude import FakeClaude
from tests.support.waiting import wait_for


def archive(pairs: list[tuple[str, str]]) -> str:
    lines = ["<!-- agentdoc archive -->", ""]
    for prompt, reply in pairs:
        lines += ["## User", "", prompt, "", "## Assistant", "", reply, ""]
    return "\n".join(lines)


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["search", *map(str, args)], catch_exceptions=False)


def test_exchanges_are_numbered_as_the_document_numbers_its_turns() -> None:
    text = conversation([("third q", "third a"), ("fourth q", "fourth a")], archived=2)
    intro, *found = exchanges(text, "document")
    assert (intro.turn, intro.prompt.strip(), intro.prompt_line) == (0, "# Chat", 0)
    assert [(e.turn, e.prompt.strip(), e.reply.strip()) for e in found] == [
        (3, "third q", "third a"),  # the footer is agentdoc's, not the conversation's
        (4, "fourth q", "fourth a"),
    ]
    lines = text.splitlines()
    assert lines[found[0].prompt_line - 1] == "## User"
    assert lines[found[1].reply_line - 1] == "## Assistant"
    crlf = exchanges(text.replace("\n", "\r\n"), "document")[1:]
    assert [(e.prompt_line, e.reply_line) for e in crlf] == [
        (e.prompt_line, e.reply_line) for e in found
    ]
    assert exchanges("just notes", "document") == []


def test_sidecar_sections_are_exchanges_of_their_turn() -> None:
    text = '# Thinking\n\n<a id="turn-1"></a>\n## Turn 1\n\nhmm\n\n<a id="turn-2"></a>\n## Turn 2\n'
    assert [(e.turn, e.reply.split()[-1], e.reply_line) for e in exchanges(text, "thinking")] == [
        (1, "hmm", 3),
        (2, "2", 8),
    ]


@pytest.mark.parametrize("query", ["C++", "foo-bar", 'say "hi', "NEAR(a b)", "a:b", "*"])
def test_any_words_are_a_valid_query(query: str) -> None:
    conn = connect()
    if query == "*":
        with pytest.raises(Exception, match="nothing to search for"):
            fts_query(query)
        return
    assert search(conn, query, []) == []


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Documents with an archive, a CRLF one, a non-UTF-8 name and a sidecar; cwd is there."""
    root = tmp_path / "notes"
    root.mkdir()
    old = root / "old.md"
    old.write_text(conversation([("How to frobnicate?", "Use the frobnicator.")]))
    os.utime(old, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    chat = root / "chat.md"
    chat.write_text(
        conversation([("Third: widgets again", "Widgets are blue.")], archived=2),
    )
    (root / "chat.archive.md").write_text(
        archive([("First: what is a widget?", "A thing."), ("Second: colours", "Red widgets.")])
    )
    (root / "chat.thinking.md").write_text(
        '# Thinking\n\n<a id="turn-3"></a>\n## Turn 3\n\nThe user likes zebras.\n'
    )
    with open(os.fsencode(root) + b"/caf\xe9.md", "wb") as f:
        f.write(conversation([("Espresso widget?", "Yes.")], nl="\r\n").encode())
    (root / "README.md").write_text("# not a session document, widget\n")
    monkeypatch.chdir(root)
    return root


def test_one_hit_per_exchange_newest_first_with_archives(tree: Path) -> None:
    result = run("widget*")
    assert result.exit_code == 0, result.output
    lines = result.stdout_bytes.splitlines()
    # The non-UTF-8 name comes out as its own bytes; the newest document first, latest turn
    # first within it; the archive's exchanges keep their numbers; README is not a session.
    assert set(lines) == {
        b"chat.md#turn-3: Third: widgets again",
        b"chat.archive.md#turn-2: Red widgets.",
        b"chat.archive.md#turn-1: First: what is a widget?",
        b"caf\xe9.md#turn-1: Espresso widget?",
    }
    chat = [line for line in lines if line.startswith(b"chat")]
    assert chat == sorted(chat, key=lambda line: -int(line.split(b"turn-")[1][:1]))
    assert b"frobnic" not in result.stdout_bytes


def test_filters_and_shapes(tree: Path) -> None:
    assert run("--prompts", "red").stdout_bytes == b""
    assert run("--replies", "red").stdout_bytes == b"chat.archive.md#turn-2: Red widgets.\n"
    assert run("zebras").stdout_bytes == b""
    assert run("--thinking", "zebras").stdout_bytes == (
        b"chat.thinking.md#turn-3: The user likes zebras.\n"
    )
    [record] = [json.loads(line) for line in run("--json", "espresso").stdout.splitlines()]
    assert os.fsencode(record["path"]) == b"caf\xe9.md"
    assert (record["turn"], record["line"], record["kind"]) == (1, 9, "document")
    vim = run("--vimgrep", "frobnicator").stdout_bytes
    assert vim == b"old.md:13:1:turn-1: Use the frobnicator.\n"
    assert run("frobnicate", tree / "chat.md").stdout_bytes == b""
    # An archive named on the command line is searched with its document.
    assert run("red", tree / "chat.archive.md").stdout_bytes == (
        b"chat.archive.md#turn-2: Red widgets.\n"
    )
    assert run("-n", "1", "widget*").stdout_bytes.count(b"\n") == 1


def test_the_index_follows_edits_and_deletions(tree: Path) -> None:
    assert run("gizmo").stdout_bytes == b""
    chat = tree / "chat.md"
    chat.write_text(chat.read_text().replace("Widgets are blue.", "Gizmos are blue."))
    assert run("gizmo").stdout_bytes == b"chat.md#turn-3: Gizmos are blue.\n"
    chat.unlink()
    assert run("gizmo").stdout_bytes == b""
    # The archive went with nothing: it is looked at with its document.
    assert b"chat.archive.md" not in run("widget*").stdout_bytes


def test_the_daemon_indexes_what_changes(
    fake_claude: Callable[..., FakeClaude], folder: Path
) -> None:
    doc = folder / "chat.md"
    with Running(make_daemon(folder, fake_claude("plain_text.ndjson"))):
        doc.write_text(conversation([]) + "Tell me about quasars\n")
        conn = connect()

        def indexed() -> bool:
            hits = search(conn, "quasars", [key(folder)])
            return bool(hits) and search(conn, "mock", [key(folder)]) != []

        wait_for(indexed, what="the prompt and the reply in the index")
    [hit] = search(conn, "mock", [key(folder)])
    assert hit.turn == 1 and hit.text == "Hello! This is a plain reply from the mock."


@pytest.mark.parametrize("name", ["chat.md", "x" * 240 + ".md"])
def test_companions_are_named_as_the_document_names_them(tmp_path: Path, name: str) -> None:
    from agentdoc.document import archive_path, sidecar_path
    from agentdoc.search.index import companions

    doc = tmp_path / name
    assert [p for p, _ in companions(doc)] == [doc, archive_path(doc), sidecar_path(doc)]


def test_the_index_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    import os
    import stat

    from agentdoc.search import connect, index_path

    connect().close()
    assert stat.S_IMODE(os.stat(index_path()).st_mode) == 0o600


def test_a_damaged_index_is_built_again(tree: Path) -> None:
    from agentdoc.search import index_path

    index_path().parent.mkdir(parents=True, exist_ok=True)
    index_path().write_bytes(b"this is not an SQLite database, just some bytes" * 100)
    assert run("espresso").stdout_bytes == b"caf\xe9.md#turn-1: Espresso widget?\n"


def test_an_unusable_index_is_a_clear_error(tree: Path) -> None:
    from agentdoc.search import index_path

    index_path().mkdir(parents=True)  # a folder where the index should be
    result = run("widget")
    assert result.exit_code == 1
    assert str(index_path()) in result.output


def test_stopping_the_indexer_indexes_what_is_queued_and_ends_its_thread(tree: Path) -> None:
    from agentdoc.search.background import note_changed, stop_indexing

    chat = tree / "chat.md"
    chat.write_text(conversation([("Queued gizmo?", "Indexed before the end.")]))
    note_changed(chat)
    stop_indexing(timeout=30)
    assert not [t for t in threading.enumerate() if t.name == "agentdoc-search"]
    assert run("gizmo").stdout.splitlines() == ["chat.md#turn-1: Queued gizmo?"]
