"""The reference is the docs site, which builds cleanly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e_support import REPO_ROOT


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
