"""`agentdoc editor NAME`: where the installed recipe lives, its text, and unknown names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agentdoc.cli import cli, recipes


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["editor", *args], catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("name", list(recipes.RECIPES))
def test_every_recipe_is_installed_where_the_command_says(name: str) -> None:
    code, output = invoke(name)
    path = Path(output.strip())
    assert code == 0 and path.exists()
    assert path.is_relative_to(recipes.editors_folder())


def test_neovim_is_a_plugin_folder_and_nvim_an_alias() -> None:
    _code, output = invoke("nvim")
    folder = Path(output.strip())
    for part in ("plugin/agentdoc.lua", "lua/agentdoc/init.lua", "doc/agentdoc.txt"):
        assert (folder / part).is_file()
    code, output = invoke("neovim", "--print")
    assert code == 1 and "is a folder" in output


def test_print_prints_the_recipe() -> None:
    code, output = invoke("vim", "--print")
    assert code == 0 and output == recipes.locate("vim").read_text()


def test_without_a_name_every_recipe_is_listed() -> None:
    code, output = invoke()
    assert code == 0
    assert [line.split()[0] for line in output.splitlines()] == list(recipes.RECIPES)


def test_an_unknown_name_lists_the_names() -> None:
    code, output = invoke("notepad")
    assert code == 1
    assert output.startswith("Error: no editor recipe called 'notepad'; the recipes are: vim, ")
    assert "emacs" in output and "JetBrains" in output
