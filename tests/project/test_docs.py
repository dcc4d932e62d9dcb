"""The README is what a first hour needs; the reference is the docs site, which builds cleanly."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = REPO_ROOT / "docs"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def links(text: str) -> list[str]:
    """The targets of the markdown links outside code (an example there is not a link)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return LINK.findall(re.sub(r"`[^`\n]*`", "", prose))


def headings(text: str, level: str = "## ") -> list[str]:
    """The headings of one level, outside fenced code."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith(level):
            found.append(line[len(level) :])
    return found


def slug(heading: str) -> str:
    """The anchor GitHub and MkDocs give a heading."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").lower())
    return re.sub(r"\s+", "-", text.strip())


def test_the_readme_holds_what_a_first_hour_needs_and_no_more() -> None:
    assert headings(README) == [
        "Set-up on a fresh machine (from a clone)",
        "Install",
        "A first conversation",
        "Where to go next",
    ]
    assert len(README.splitlines()) <= 150


def test_the_readme_gives_exactly_two_set_up_commands_and_ci_runs_the_second() -> None:
    setup = README.split("## Set-up on a fresh machine (from a clone)\n")[1].split("\n## ")[0]
    [block] = re.findall(r"```sh\n(.*?)```", setup, re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert commands == ["make demo", "make test"]
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert [line for line in ci.splitlines() if line.startswith("make")] == ["make test"]


def test_every_link_in_the_readme_leads_to_a_page_and_heading_that_exist() -> None:
    local = [target for target in links(README) if "://" not in target]
    assert local, "the README links to the docs"
    for target in local:
        path, _, anchor = target.partition("#")
        page = REPO_ROOT / path
        assert page.is_file(), target
        if anchor:
            text = page.read_text(encoding="utf-8")
            anchors = {slug(h) for level in ("# ", "## ", "### ") for h in headings(text, level)}
            assert anchor in anchors, target


def test_the_readme_points_to_every_page_of_the_reference() -> None:
    linked = {Path(t.partition("#")[0]).name for t in links(README) if t.startswith("docs/")}
    pages = {page.name for page in DOCS.glob("*.md")} - {"index.md"}
    assert pages <= linked, sorted(pages - linked)


def test_the_site_builds_with_no_broken_link_and_no_page_left_out(tmp_path: Path) -> None:
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "configuration" / "index.html").is_file()
