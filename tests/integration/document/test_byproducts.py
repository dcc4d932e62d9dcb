"""Sync tools' by-products are recognised by name, and a conflict copy names its document."""

from __future__ import annotations

import pytest

from agentdoc.document import byproduct_kind, conflict_original, is_byproduct


@pytest.mark.parametrize(
    ("name", "original"),
    [
        ("chat.sync-conflict-20261125-123404-ASALHUV.md", "chat.md"),
        ("my.notes.sync-conflict-20261125-123404-ASALHUV.md", "my.notes.md"),
        ("README.sync-conflict-20261125-123404-ASALHUV", "README"),
        ("chat (Ann's conflicted copy 2026-11-25).md", "chat.md"),
        ("chat (Ann's conflicted copy 2026-11-25 (1)).md", "chat.md"),
        ("chat (conflicted copy 2026-11-25 123404).md", "chat.md"),
        ("chat (Conflicted copy ann-laptop 202611251234).md", "chat.md"),
        ("Plan (v2) (conflicted copy 2026-11-25 123404).md", "Plan (v2).md"),
        ("chat_conflict-20261125-123404.md", "chat.md"),
        ("chat.conflict1.md", "chat.md"),
        ("chat.md.conflict2", "chat.md"),
        ("chat.md..path1", "chat.md"),
        ("chat.md..path2", "chat.md"),
    ],
)
def test_a_conflict_copy_names_its_document(name: str, original: str) -> None:
    assert conflict_original(name) == original
    assert byproduct_kind(name) == "conflict"
    assert is_byproduct(name)


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        (".syncthing.chat.md.tmp", "temporary"),
        ("~syncthing~chat.md.tmp", "temporary"),
        (".~lock.chat.md#", "lock"),
        (".chat.md.icloud", "placeholder"),
        ("~$chat.md", "lock"),
    ],
)
def test_other_byproducts_by_kind(name: str, kind: str) -> None:
    assert byproduct_kind(name) == kind
    assert conflict_original(name) is None


@pytest.mark.parametrize(
    "name",
    [
        "chat.md",
        "conflict.md",
        "sync-conflict notes.md",
        "chat (draft).md",
        "a conflicted copy of my thoughts.md",
        "chat.sync-conflict.md",
        "2026-11-25 123404.md",
        "path1.md",
        "chat.conflict.md",
    ],
)
def test_ordinary_names_are_not_byproducts(name: str) -> None:
    assert byproduct_kind(name) is None
    assert conflict_original(name) is None
