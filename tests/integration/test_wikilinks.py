"""Obsidian's ``[[note]]`` and ``![[picture]]`` in a prompt: found by name, read as includes."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from agentdoc.turn import includes, wikilinks
from agentdoc.turn.includes import IncludeRefused, Limits, Place, place_for, resolve
from tests.support.documents import PNG
from tests.support.fake_claude import FakeClaude

VAULT = [
    "Plan.md",
    "projects/Plan.md",
    "projects/alpha/Plan.md",
    "projects/alpha/Notes.md",
    "archive/Notes.md",
    "b/Notes.md",
    "attachments/Pasted image 20260101.png",
    "deep/photo.png",
    "readme.txt",
]


@pytest.mark.parametrize(
    ("target", "here", "found"),
    [
        ("Plan", "", "Plan.md"),  # the one closest to the vault's top
        ("Plan", "projects/alpha", "Plan.md"),  # …wherever the linking note is
        ("plan", "", "Plan.md"),  # names compare without regard to case
        ("Plan.md", "", "Plan.md"),
        ("alpha/Plan", "", "projects/alpha/Plan.md"),  # a path narrows the name
        ("projects/Plan", "", "projects/Plan.md"),
        ("Notes", "", "archive/Notes.md"),  # equally deep: the first by path
        ("./Plan", "projects/alpha", "projects/alpha/Plan.md"),  # from the note's folder
        ("../Plan", "projects/alpha", "projects/Plan.md"),
        ("/Plan", "projects", "Plan.md"),  # from the vault's top
        ("/alpha/Plan", "", None),  # …and only there
        ("Pasted image 20260101.png", "", "attachments/Pasted image 20260101.png"),
        ("photo.png", "", "deep/photo.png"),
        ("readme.txt", "", "readme.txt"),
        ("readme", "", None),  # only `.md` is implied
        ("Missing", "", None),
        ("../../../etc/passwd", "projects", None),  # nothing above the vault's top
        ("lan", "", None),  # a name, never part of one
    ],
)
def test_a_link_names_a_file_as_obsidian_resolves_it(
    target: str, here: str, found: str | None
) -> None:
    assert wikilinks.pick(target, VAULT, here) == found


def test_a_name_given_with_its_extension_beats_the_same_name_with_md_added() -> None:
    assert wikilinks.pick("a.png", ["x/a.png.md", "x/a.png"]) == "x/a.png"


@pytest.mark.parametrize(
    ("prompt", "links"),
    [
        ("See [[Plan]].", [("Plan", "", False)]),
        ("![[Pasted image.png]]", [("Pasted image.png", "", True)]),
        (
            "[[Plan|the plan]] and [[Plan#Goals|goals]]",
            [("Plan", "", False), ("Plan", "Goals", False)],
        ),
        ("[[Plan#^block1]]", [("Plan", "^block1", False)]),
        ("[[folder/Plan#A#B]]", [("folder/Plan", "A#B", False)]),
        ("`[[Plan]]` is code", []),
        ("```\n[[Plan]]\n```", []),
        ("    [[Plan]]", []),  # an indented code block
        ("[[#Only a heading]]", []),
        ("[[]] and [[ ]]", []),
        ("a [single] link", []),
    ],
)
def test_links_are_found_outside_code(prompt: str, links: list[tuple[str, str, bool]]) -> None:
    assert [(link.target, link.heading, link.embed) for link in wikilinks.find(prompt)] == links


PLAN = "# Plan\n\nIntro.\n\n## Goals\n\nShip it.\n\n### Detail\n\nSmall.\n\n## Risks\n\nNone.\n"


@pytest.mark.parametrize(
    ("heading", "part"),
    [
        ("", PLAN),
        ("Goals", "## Goals\n\nShip it.\n\n### Detail\n\nSmall.\n"),
        ("goals", "## Goals\n\nShip it.\n\n### Detail\n\nSmall.\n"),
        ("Goals#Detail", "### Detail\n\nSmall.\n"),
        ("Risks", "## Risks\n\nNone.\n"),
        ("^abc123", PLAN),
        ("Nowhere", None),
    ],
)
def test_a_heading_names_its_section(heading: str, part: str | None) -> None:
    assert wikilinks.section(PLAN, heading) == part


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """An Obsidian vault: notes in folders, a pasted picture, chats in a folder of their own."""
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "chats").mkdir()
    (root / "projects" / "alpha").mkdir(parents=True)
    (root / "attachments").mkdir()
    (root / "Plan.md").write_text(PLAN)
    (root / "projects" / "alpha" / "Plan.md").write_text("the deeper plan\n")
    (root / "projects" / "alpha" / "Roadmap.md").write_text("ROADMAP-TEXT\n")
    (root / "attachments" / "Pasted image 20260101.png").write_bytes(PNG)
    (root / ".obsidian" / "secret.md").write_text("HIDDEN\n")
    (tmp_path / "outside.md").write_text("OUTSIDE\n")
    return root


def at(vault: Path, folder: str = "chats") -> Place:
    """The turn's place for a document in ``folder``."""
    return place_for(vault / folder)


def test_the_vault_around_the_working_folder_may_be_read(vault: Path) -> None:
    assert at(vault).roots == ((vault / "chats").resolve(), vault.resolve())
    assert "ROADMAP-TEXT" in resolve("@../projects/alpha/Roadmap.md", at(vault)).text


def test_a_linked_note_follows_the_paragraph_that_links_it(vault: Path) -> None:
    prompt = "Compare [[Roadmap]] with\n[[Plan|our plan]].\n\nWhich is older?"
    context = resolve(prompt, at(vault))
    assert context.files == ("projects/alpha/Roadmap.md", "Plan.md")
    assert context.text == (
        "Compare [[Roadmap]] with\n[[Plan|our plan]].\n"
        "Contents of `projects/alpha/Roadmap.md`:\n```\nROADMAP-TEXT\n```\n"
        f"Contents of `Plan.md`:\n```\n{PLAN}```\n"
        "\nWhich is older?"
    )


def test_an_embedded_picture_goes_as_an_image(vault: Path) -> None:
    prompt = "What is this?\n\n![[Pasted image 20260101.png]]"
    context = resolve(prompt, at(vault))
    assert [(i.path, i.media_type, i.data) for i in context.images] == [
        ("attachments/Pasted image 20260101.png", "image/png", PNG)
    ]
    assert context.text == prompt


def test_a_heading_link_sends_its_section_once(vault: Path) -> None:
    context = resolve("[[Plan#Risks]] and again [[plan#risks|the risks]]", at(vault))
    assert context.text.count("Contents of `Plan.md#Risks`:\n```\n## Risks\n\nNone.\n```") == 1
    assert "Ship it" not in context.text


def test_without_an_obsidian_folder_the_vault_is_the_working_folder(vault: Path) -> None:
    (vault / ".obsidian" / "secret.md").unlink()
    (vault / ".obsidian").rmdir()
    (vault / "chats" / "Plan.md").write_text("local plan\n")
    context = resolve("[[Plan]] [[Roadmap]]", at(vault))
    assert "local plan" in context.text and "Ship it" not in context.text
    assert context.files == ("Plan.md",)  # the roadmap is out of reach: a link, as text
    with pytest.raises(IncludeRefused, match="outside the folders"):
        resolve("@../projects/alpha/Roadmap.md", at(vault))


def test_a_note_not_written_yet_stays_a_link(vault: Path) -> None:
    context = resolve("Start [[Someday]] and [[.obsidian/secret]]", at(vault))
    assert context.text == "Start [[Someday]] and [[.obsidian/secret]]"
    assert context.files == ()


@pytest.mark.parametrize(
    ("prompt", "says"),
    [
        ("![[Missing.png]]", "no file named 'Missing.png'"),
        ("[[Plan#Nowhere]]", "Plan.md has no heading 'Nowhere'"),
    ],
)
def test_embeds_of_missing_things_are_refused(vault: Path, prompt: str, says: str) -> None:
    with pytest.raises(IncludeRefused, match=says) as refused:
        resolve(prompt, at(vault))
    assert prompt.split("]]")[0] in str(refused.value)


def test_the_include_rules_hold_for_links(vault: Path) -> None:
    # Only the document's own folder may be read here, not the rest of the vault.
    only_here = Place(vault / "chats", ((vault / "chats").resolve(),))
    with pytest.raises(IncludeRefused, match=r"\[\[Roadmap\]\] is outside the folders"):
        resolve("[[Roadmap]]", only_here)
    (vault / "chats" / "big.md").write_bytes(b"x" * 2048)
    with pytest.raises(IncludeRefused, match=r"\[\[big\]\] is 2 KB, over the 1 KB cap"):
        resolve("[[big]]", at(vault), Limits(file_bytes=1024))
    with pytest.raises(IncludeRefused, match="include_prompt_limit"):
        resolve("[[Plan]] [[Roadmap]]", at(vault), Limits(prompt_bytes=len(PLAN) + 5))
    with pytest.raises(IncludeRefused, match="image_limit"):
        resolve("![[Pasted image 20260101.png]]", at(vault), Limits(image_bytes=10))
    (vault / "chats" / "blob.bin").write_bytes(b"\0\1\2")
    with pytest.raises(IncludeRefused, match="binary"):
        resolve("![[blob.bin]]", at(vault))


def test_a_vault_too_big_to_look_through_leaves_links_as_text(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(includes, "MAX_VAULT_FILES", 3)
    assert resolve("See [[Roadmap]]", at(vault)).text == "See [[Roadmap]]"
    with pytest.raises(IncludeRefused, match=r"!\[\[Roadmap\]\]: .* more than 3 files"):
        resolve("![[Roadmap]]", at(vault))


def test_a_link_through_a_symlink_out_is_refused(vault: Path) -> None:
    (vault / "chats" / "Leak.md").symlink_to(vault.parent / "outside.md")
    with pytest.raises(IncludeRefused, match="outside the folders"):
        resolve("[[Leak]]", at(vault))


def test_the_daemon_sends_the_linked_note_and_picture(
    vault: Path, plain_claude: FakeClaude
) -> None:
    from tests.support.daemon import DOC, Running, make_daemon
    from tests.support.waiting import wait_for

    doc = vault / "chats" / "chat.md"
    doc.write_text(DOC)
    with Running(make_daemon(vault / "chats", plain_claude)):
        doc.write_text(DOC + "What does [[Roadmap]] say?\n\n![[Pasted image 20260101.png]]\n")
        wait_for(lambda: "plain reply from the mock" in doc.read_text(), what="the reply")
    [call] = plain_claude.calls()
    assert "ROADMAP-TEXT" in call["stdin"]
    assert "Contents of `projects/alpha/Roadmap.md`" in call["stdin"]
    assert base64.b64encode(PNG).decode("ascii") in call["stdin"]
    assert "HIDDEN" not in call["stdin"]
    assert "[[Roadmap]]" in doc.read_text()  # the document keeps the link, not the note
