"""Includes and pictures a prompt names: what is read, what is refused, and what is sent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentdoc.agents import AgentRequest
from agentdoc.agents.base.prompt import WORD_JOINER, neutralise_command
from agentdoc.agents.claude.process import build_argv, stdin_text
from agentdoc.agents.claude.prompt import neutralise, user_content
from agentdoc.config import Settings
from agentdoc.document import parse
from agentdoc.turn.includes import (
    MAX_MATCHES,
    IncludeRefused,
    Limits,
    Place,
    code_lines,
    image_targets,
    image_type,
    include_tokens,
    place_for,
    resolve,
)
from tests.support.clearance import leave_for, own_leave
from tests.support.documents import PNG
from tests.support.fake_claude import FakeClaude


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project folder with text, nested folders, a picture, and a secret beside it."""
    work = tmp_path / "work"
    (work / "src" / "deep").mkdir(parents=True)
    (work / "notes").mkdir()
    (work / "notes" / "spec.txt").write_text("the spec\n")
    (work / "src" / "a.py").write_text("A = 1\n")
    (work / "src" / "b.py").write_text("B = 2\n")
    (work / "src" / "deep" / "c.py").write_text("C = 3\n")
    (work / "src" / "data.bin").write_bytes(b"\x00\x01\x02binary")
    (work / "pic.png").write_bytes(PNG)
    (work / "fake.png").write_text("not a picture")
    (work / "with space.txt").write_text("spaced\n")
    (tmp_path / "secret.txt").write_text("SECRET\n")
    (work / "out").symlink_to(tmp_path / "secret.txt")
    (work / "inlink").symlink_to(work / "notes" / "spec.txt")
    return work


def place(work: Path) -> Place:
    return Place(work, (work.resolve(),))


@pytest.mark.parametrize(
    ("line", "tokens"),
    [
        ("@notes/spec.txt", ["notes/spec.txt"]),
        ("  @a.py   @b.py ", ["a.py", "b.py"]),
        ('@"with space.txt"', ["with space.txt"]),
        ("@src/**/*.py", ["src/**/*.py"]),
        ("look at @a.py", None),
        ("@alice what do you think?", None),
        ("mail me at me@example.com", None),
        ("", None),
        ("@", None),
    ],
)
def test_only_a_line_of_at_tokens_is_an_include(line: str, tokens: list[str] | None) -> None:
    assert include_tokens(line) == tokens


def test_lines_in_code_are_never_includes() -> None:
    prompt = "Why?\n\n```python\n@property\n```\n\n    @indented\n\n@real.txt\n"
    assert code_lines(prompt) == {2, 3, 4, 6}
    assert include_tokens(prompt.split("\n")[8]) == ["real.txt"]


@pytest.mark.parametrize(
    ("token", "files"),
    [
        ("notes/spec.txt", ["notes/spec.txt"]),
        ("src/*.py", ["src/a.py", "src/b.py"]),
        ("src/**/*.py", ["src/a.py", "src/b.py", "src/deep/c.py"]),
        ("src/deep/c.py", ["src/deep/c.py"]),
        ("inlink", ["inlink"]),
        ('"with space.txt"', ["with space.txt"]),
    ],
)
def test_files_inside_the_folder_are_sent_under_their_paths(
    tree: Path, token: str, files: list[str]
) -> None:
    context = resolve(f"Read this:\n@{token}\nThanks", place(tree))
    assert list(context.files) == files
    for name in files:
        assert f"Contents of `{name}`:" in context.text
        assert (tree / name).read_text() in context.text
    assert context.text.startswith("Read this:\n") and context.text.endswith("\nThanks")
    assert f"@{token}" not in context.text


@pytest.mark.parametrize(
    ("token", "says"),
    [
        ("../secret.txt", "outside the folders"),
        ("{abs}", "outside the folders"),
        ("out", "outside the folders"),  # a symlink that leads out
        ("/etc/hostname", "outside the folders"),
        ("missing.txt", "no such file"),
        ("src/*.rs", "matches no file"),
        ("src/data.bin", "binary"),
        ("src", "is a folder"),
        ("/etc/*", "outside the folders"),  # refused before the walk
        ("../*.txt", "outside the folders"),
    ],
)
def test_refusals_name_the_path(tree: Path, token: str, says: str) -> None:
    token = token.replace("{abs}", str(tree.parent / "secret.txt"))
    with pytest.raises(IncludeRefused) as refused:
        resolve(f"@{token}", place(tree))
    assert says in str(refused.value)
    assert token in str(refused.value)


def test_a_file_over_the_cap_is_refused_before_it_is_read(tree: Path) -> None:
    (tree / "big.log").write_bytes(b"x" * 10 * 1024 * 1024)
    with pytest.raises(IncludeRefused, match=r"@big\.log is 10 MB, over the 256 KB cap"):
        resolve("@big.log", place(tree))


def test_a_glob_matching_too_many_files_is_refused(tree: Path) -> None:
    many = tree / "many"
    many.mkdir()
    for n in range(MAX_MATCHES + 1):
        (many / f"{n}.txt").write_text("x")
    with pytest.raises(IncludeRefused, match=f"matches more than {MAX_MATCHES} files"):
        resolve("@many/*.txt", place(tree))


def test_a_missing_file_says_how_to_send_the_text(tree: Path) -> None:
    with pytest.raises(IncludeRefused, match="put it in backticks"):
        resolve("@team", place(tree))


def test_the_prompt_cap_counts_every_file(tree: Path) -> None:
    limits = Limits(file_bytes=100, prompt_bytes=10)
    resolve("@src/a.py", place(tree), limits)  # 6 bytes fit
    with pytest.raises(IncludeRefused, match="include_prompt_limit"):
        resolve("@src/a.py\n@src/b.py", place(tree), limits)


def test_the_git_work_tree_and_add_dirs_widen_what_may_be_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "README").write_text("top\n")
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "x.txt").write_text("x\n")
    assert "top" in resolve("@../README", place_for(repo / "docs")).text
    with pytest.raises(IncludeRefused):
        resolve("@../../extra/x.txt", place_for(repo / "docs"))
    widened = place_for(repo / "docs", [str(extra)])
    assert "x\n" in resolve("@../../extra/x.txt", widened).text


def test_the_fence_is_longer_than_any_backtick_run_in_the_file(tree: Path) -> None:
    (tree / "md.md").write_text("````\ncode\n````\n")
    text = resolve("@md.md", place(tree)).text
    assert "`````\n````\ncode\n````\n`````" in text


def test_pictures_are_read_and_typed_by_their_bytes(tree: Path) -> None:
    prompt = "See ![diagram](pic.png) and ![web](https://example.com/x.png)\n\n```\n![no](x)\n```"
    assert image_targets(prompt) == ["pic.png"]
    context = resolve(prompt, place(tree))
    assert [(i.path, i.media_type, i.data) for i in context.images] == [
        ("pic.png", "image/png", PNG)
    ]
    assert context.text == prompt  # the markdown stays; the picture goes alongside


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("fake.png", "not a PNG, JPEG, GIF or WebP"),
        ("../secret.txt", "outside the folders"),
        ("gone.png", "no such file"),
    ],
)
def test_pictures_are_refused_like_includes(tree: Path, target: str, says: str) -> None:
    with pytest.raises(IncludeRefused, match=says):
        resolve(f"![x]({target})", place(tree))


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0rest", "image/jpeg"),
        (b"GIF89a....", "image/gif"),
        (b"GIF87a....", "image/gif"),
        (b"RIFF\x10\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"RIFF\x10\x00\x00\x00WAVEfmt ", None),
        (b"%PDF-1.7", None),
    ],
)
def test_image_types(head: bytes, kind: str | None) -> None:
    assert image_type(head) == kind


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("@a.txt", f"{WORD_JOINER}@a.txt"),
        ("see @/etc/hostname now", f"see {WORD_JOINER}@/etc/hostname now"),
        ("x\n@y", f"x\n{WORD_JOINER}@y"),
        ("\t@y", f"\t{WORD_JOINER}@y"),
        ("見て。@y", f"見て。{WORD_JOINER}@y"),
        ('@"a b"', f'{WORD_JOINER}@"a b"'),
        ("me@example.com", "me@example.com"),
        ("`x`@y", "`x`@y"),
        ("/evil @x", f"{WORD_JOINER}/evil {WORD_JOINER}@x"),
    ],
)
def test_every_mention_the_cli_would_expand_is_neutralised(text: str, sent: str) -> None:
    assert neutralise(text) == sent


@pytest.mark.parametrize(
    ("text", "sent"),
    [
        ("/init", f"{WORD_JOINER}/init"),
        ("/etc/hosts is odd", f"{WORD_JOINER}/etc/hosts is odd"),
        (" \n\t/init", f" \n\t{WORD_JOINER}/init"),
        ("\ufeff/init", f"\ufeff{WORD_JOINER}/init"),
        ("see /init", "see /init"),
        ("a\n/init", "a\n/init"),  # only the start of the text is a command
        ("//x", f"{WORD_JOINER}//x"),
        ("", ""),
    ],
)
def test_a_leading_slash_is_never_the_agents_command(text: str, sent: str) -> None:
    assert neutralise_command(text) == sent


def test_a_prompt_with_pictures_goes_as_one_stream_json_message(tmp_path: Path) -> None:
    from agentdoc.agents import ImagePart

    image = ImagePart("pic.png", "image/png", PNG)
    request = AgentRequest(
        prompt="look @x", cwd=tmp_path, images=(image,), clearance=leave_for(tmp_path)
    )
    argv = build_argv("claude", request, Settings())
    assert "--input-format=stream-json" in argv
    line = json.loads(stdin_text(request))
    content = line["message"]["content"]
    assert content[0] == {"type": "text", "text": f"look {WORD_JOINER}@x"}
    assert content[1]["source"]["media_type"] == "image/png"
    assert content[1]["source"]["data"] == image.base64()
    plain = AgentRequest(prompt="@x", cwd=tmp_path, clearance=leave_for(tmp_path))
    assert "--input-format=stream-json" not in build_argv("claude", plain, Settings())
    assert stdin_text(plain) == f"{WORD_JOINER}@x"
    assert user_content("hi") == "hi"


def test_an_unreadable_file_is_refused(tree: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    locked = tree / "locked.txt"
    locked.write_text("x")
    locked.chmod(0)
    with pytest.raises(IncludeRefused, match=r"locked\.txt cannot be read"):
        resolve("@locked.txt", place(tree))


def test_the_daemon_shows_a_refusal_and_sends_the_fixed_prompt(
    tmp_path: Path, plain_claude: FakeClaude
) -> None:
    from tests.support.daemon import DOC, Running, make_daemon, state_of
    from tests.support.waiting import wait_for

    folder = tmp_path / "docs"
    folder.mkdir()
    (tmp_path / "secret.txt").write_text("SECRET\n")
    (folder / "ok.txt").write_text("fine\n")
    doc = folder / "chat.md"
    doc.write_text(DOC)
    with Running(make_daemon(folder, plain_claude)) as daemon:
        doc.write_text(DOC + "Read @x\n@../secret.txt\n")
        wait_for(lambda: "**Not sent:**" in doc.read_text(), what="the refusal notice")
        wait_for(lambda: state_of(doc) == "error", what="the error status")
        # A save racing the daemon's bookkeeping of the failure would count as already seen.
        wait_for(lambda: daemon._docs[doc].thread is None, what="the daemon to settle the turn")
        assert plain_claude.calls() == []
        parsed = parse(doc.read_text())
        assert parsed.pending_prompt() == "Read @x\n@../secret.txt"
        text = doc.read_text().replace("@../secret.txt", "@ok.txt")
        doc.write_text(text)
        wait_for(lambda: "plain reply from the mock" in doc.read_text(), what="the reply")
    assert "**Not sent:**" not in doc.read_text()
    [call] = plain_claude.calls()
    assert "fine" in call["stdin"] and "SECRET" not in call["stdin"]


def test_an_agent_that_takes_no_pictures_refuses_before_anything_is_sent(tmp_path: Path) -> None:
    from agentdoc.errors import PromptRefused
    from agentdoc.turn.runner import TurnRunner

    (tmp_path / "pic.png").write_bytes(PNG)
    doc = tmp_path / "chat.md"
    doc.write_text("---\nagentdoc: {}\n---\n\n## User\n\nWhat is this? ![p](pic.png)\n")
    seen: list[AgentRequest] = []

    def no_pictures(request: AgentRequest, settings: Settings, environ: object) -> object:
        seen.append(request)
        raise PromptRefused("this agent does not accept pictures; remove ![…](pic.png)")

    runner = TurnRunner(doc, Settings(), clear=own_leave, launcher=no_pictures)  # type: ignore[arg-type]
    with pytest.raises(PromptRefused):
        runner.run()
    assert [len(r.images) for r in seen] == [1]
    text = doc.read_text()
    assert "**Not sent:** this agent does not accept pictures" in text
    assert parse(text).pending_prompt() == "What is this? ![p](pic.png)"
