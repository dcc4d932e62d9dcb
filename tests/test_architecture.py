"""The package's import graph follows the data flow (docs/architecture.md).

Packages are layered: the command line on top, then `daemon` → `conversation` → `turn` →
`records` → `document` → `agents`, then `config` and `errors`. A module may import from its own
package or from a layer below, never from one above; across packages it imports only the names
a package's `__init__` lists in `__all__`; and no chain of imports leads back to where it
started.
"""

from __future__ import annotations

import ast
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.support.paths import PACKAGE

# Highest first: each may import only from its own entry and those after it.
LAYERS: list[set[str]] = [
    {
        "agentdoc",
        "agentdoc.__main__",
        "agentdoc.cli",
    },
    {"agentdoc.web"},
    {"agentdoc.daemon"},
    {"agentdoc.daemon.synced"},
    {"agentdoc.daemon.watch"},
    {"agentdoc.conversation"},
    {"agentdoc.turn", "agentdoc.search"},
    {"agentdoc.records"},
    {"agentdoc.document"},
    {"agentdoc.agents"},
    {"agentdoc.agents.claude", "agentdoc.agents.acp", "agentdoc.agents.fakeapi"},
    {"agentdoc.agents.base"},
    {"agentdoc.localstate"},
    {"agentdoc.syncmarks"},
    {"agentdoc.synctools"},
    {"agentdoc.config", "agentdoc.errors", "agentdoc.lazy", "agentdoc.userstate"},
]
# Longest first, so a module of agents.claude belongs to it rather than to agents.
SUBPACKAGES = (
    "agentdoc.agents.fakeapi",
    "agentdoc.agents.claude",
    "agentdoc.agents.acp",
    "agentdoc.agents.base",
    "agentdoc.agents",
    "agentdoc.web",
    "agentdoc.daemon.synced",
    "agentdoc.daemon.watch",
    "agentdoc.daemon",
    "agentdoc.conversation",
    "agentdoc.turn",
    "agentdoc.records",
    "agentdoc.search",
    "agentdoc.document",
    "agentdoc.cli",
    "agentdoc.synctools",
)
# Rooms inside a package, reached by the modules beside them through their own modules: the
# package's face speaks for them to everyone else, so they have no face of their own.
INNER_ROOMS = {
    "agentdoc.agents.base": "agentdoc.agents",
    "agentdoc.daemon.synced": "agentdoc.daemon",
    "agentdoc.daemon.watch": "agentdoc.daemon",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (a submodule when `from pkg import submodule`)
    names: tuple[str, ...]  # names taken from `target` ("*" never appears: star imports fail)
    line: int


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST, typed: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """Every import, at any depth; those only seen by the type checker when `typed`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if not typed and isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


@cache
def imports_of(module: str, typed: bool = False) -> tuple[Import, ...]:
    """The module's imports of agentdoc; with `typed`, those only the type checker sees too."""
    modules = all_modules()
    tree = ast.parse(modules[module].read_text(encoding="utf-8"))
    is_package = modules[module].name == "__init__.py"
    result: list[Import] = []
    for node in _import_nodes(tree, typed):
        if isinstance(node, ast.Import):
            result += [
                Import(module, a.name, (), node.lineno)
                for a in node.names
                if a.name.split(".")[0] == "agentdoc"
            ]
            continue
        base = _resolve(module, is_package, node)
        if base is None:
            continue
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in modules:
                result.append(Import(module, sub, (), node.lineno))
            else:
                result.append(Import(module, base, (alias.name,), node.lineno))
    return tuple(result)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str | None:
    if node.level:
        parts = module.split(".")
        keep = len(parts) - node.level + (1 if is_package else 0)
        base = ".".join(parts[:keep])
        return f"{base}.{node.module}" if node.module else base
    if node.module and node.module.split(".")[0] == "agentdoc":
        return node.module
    return None


def owner(module: str) -> str:
    """The layer entry a module belongs to: its subpackage, or the module itself."""
    for package in SUBPACKAGES:
        if module == package or module.startswith(package + "."):
            return package
    return module


def layer(module: str) -> int:
    entry = owner(module)
    for index, members in enumerate(LAYERS):
        if entry in members:
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def test_every_module_has_a_layer() -> None:
    for module in all_modules():
        layer(module)


def upward(imports: list[Import]) -> list[str]:
    return [
        f"{i.source}:{i.line} imports {i.target}"
        for i in imports
        if layer(i.target) < layer(i.source)
    ]


def private(imports: list[Import], public_of: Callable[[str], set[str]]) -> list[str]:
    found = []
    for i in imports:
        target_owner = owner(i.target)
        if target_owner == owner(i.source) or target_owner not in SUBPACKAGES:
            continue
        parent = INNER_ROOMS.get(target_owner)
        if parent and (i.source == parent or i.source.startswith(parent + ".")):
            continue
        if i.target != target_owner:
            found.append(f"{i.source}:{i.line} reaches into {i.target}")
        public = public_of(target_owner)
        found += [
            f"{i.source}:{i.line} imports {n}, not in {target_owner}.__all__"
            for n in i.names
            if n not in public
        ]
    return found


def _public(package: str) -> set[str]:
    return set(importlib.import_module(package).__all__)


def every_import() -> list[Import]:
    return [i for module in all_modules() for i in imports_of(module)]


def test_imports_only_point_down() -> None:
    assert upward(every_import()) == []


def test_other_packages_use_only_the_public_names() -> None:
    assert private(every_import(), _public) == []


# Above the agents' face, nothing names a protocol: a new agent is a sub-package, not an `if`.
def reaches_protocol(imports: list[Import]) -> list[str]:
    return [
        f"{i.source}:{i.line} imports {i.target}"
        for i in imports
        if names_an_agent(i.source) and owner(i.target).startswith("agentdoc.agents.")
    ]


def test_only_the_agents_face_is_seen_above_it() -> None:
    assert reaches_protocol(every_import()) == []


# The agents' and protocols' names: above `agents/` code asks an `Agent` instead (a capability,
# a quirk, its own checks), and what people read there says "the agent". The config's keys are
# the user's own words (`claude = …`), and the demo runs one agent by design.
AGENT_NAMES = re.compile(r"(?<![a-z])(claude|acp|gemini|codex|opencode|anthropic)(?![a-z])", re.I)
NAMES_ALLOWED = ("agentdoc.config", "agentdoc.cli.demo")


def names_an_agent(module: str) -> bool:
    """Whether the rule applies: every module outside the agents' package but the allowed."""
    below = owner(module).startswith("agentdoc.agents")
    allowed = any(module == m or module.startswith(m + ".") for m in NAMES_ALLOWED)
    return not below and not allowed


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return [node.name, node.asname or ""]
    return []


def protocol_literals(module: str, tree: ast.AST) -> list[str]:
    """Strings (but docstrings) and names that name an agent or a protocol, and `.protocol`
    read."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and (named := AGENT_NAMES.search(node.value)):
                found.append(f"{module}:{line} names {named[0]!r} in {node.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr == "protocol":
            found.append(f"{module}:{line} asks for an agent's protocol")
        for name in _identifiers(node):
            if named := AGENT_NAMES.search(name.replace("_", " ")):
                found.append(f"{module}:{line} names {named[0]!r} in the name {name}")
    return sorted(found)


def test_no_protocol_named_above_the_agents() -> None:
    found = [
        problem
        for module, path in all_modules().items()
        if names_an_agent(module)
        for problem in protocol_literals(module, ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert found == []


def test_the_protocol_rule_catches_violations() -> None:
    source = (
        '"""Claude is only named in prose."""\n'
        'if agent == "claude":\n'
        "    pass\n"
        "native = spec.protocol\n"
        'note = "the Gemini CLI"\n'
        "from agentdoc.agents import CLAUDE\n"
        "def is_acp(codex_agent: str) -> bool:\n"
        '    """An ACP agent, said in prose."""\n'
        "    return show(opencode=1)\n"
        'fine = "an acpi table; placeholder"\n'
    )
    assert protocol_literals("agentdoc.turn.x", ast.parse(source)) == [
        "agentdoc.turn.x:2 names 'claude' in 'claude'",
        "agentdoc.turn.x:4 asks for an agent's protocol",
        "agentdoc.turn.x:5 names 'Gemini' in 'the Gemini CLI'",
        "agentdoc.turn.x:6 names 'CLAUDE' in the name CLAUDE",
        "agentdoc.turn.x:7 names 'acp' in the name is_acp",
        "agentdoc.turn.x:7 names 'codex' in the name codex_agent",
        "agentdoc.turn.x:9 names 'opencode' in the name opencode",
    ]
    assert names_an_agent("agentdoc.cli.doctor") and names_an_agent("agentdoc.web.app")
    assert not names_an_agent("agentdoc.agents.claude.checks")
    assert not names_an_agent("agentdoc.cli.demo")


def test_each_package_says_what_it_does_and_exports() -> None:
    for package in SUBPACKAGES:
        imported = importlib.import_module(package)
        assert (imported.__doc__ or "").strip(), f"{package} has no docstring"
        exported = getattr(imported, "__all__", None)
        if package in INNER_ROOMS:
            assert exported == [], f"{package} is spoken for by {INNER_ROOMS[package]}'s face"
            continue
        assert exported, f"{package} lists no __all__"
        assert [n for n in exported if not hasattr(imported, n)] == []


def test_an_inner_room_is_reached_only_from_beside_it() -> None:
    into_base = Import("agentdoc.agents.claude.turn", "agentdoc.agents.base.events", (), 3)
    from_above = Import("agentdoc.turn.stream", "agentdoc.agents.base.events", (), 4)
    into_watch = Import("agentdoc.daemon.saves", "agentdoc.daemon.watch.settle", (), 5)
    from_cli = Import("agentdoc.cli.doctor", "agentdoc.daemon.watch.tree", (), 6)
    assert private([into_base, from_above, into_watch, from_cli], lambda _p: set()) == [
        "agentdoc.turn.stream:4 reaches into agentdoc.agents.base.events",
        "agentdoc.cli.doctor:6 reaches into agentdoc.daemon.watch.tree",
    ]


def import_graph(typed: bool) -> dict[str, list[str]]:
    return {m: sorted({i.target for i in imports_of(m, typed)} - {m}) for m in all_modules()}


def test_no_import_cycles() -> None:
    """Not even through an import only the type checker sees: a cycle is a cycle in the design
    whether or not Python trips over it at start-up."""
    graph = import_graph(typed=True)
    cycles = _cycles(graph)
    assert cycles == []


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """One example cycle per strongly connected group of modules (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, [])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, []))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": ["b"], "b": ["c"], "c": []}, []),
        ({"a": ["b"], "b": ["a"]}, [["a", "b"]]),
        ({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}, [["a", "b", "c"]]),
    ],
)
def test_cycle_finder(graph: dict[str, list[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected


def test_the_rules_catch_violations() -> None:
    """Each rule, fed a made-up import that breaks it, reports it."""
    up = Import("agentdoc.agents.claude.process", "agentdoc.turn.runner", ("TurnRunner",), 7)
    deep = Import("agentdoc.turn.runner", "agentdoc.document.merge", ("merge_text",), 8)
    hidden = Import("agentdoc.daemon.service", "agentdoc.turn", ("StatusReporter",), 9)
    fine = Import("agentdoc.turn.runner", "agentdoc.document", ("parse",), 10)
    protocol = Import("agentdoc.turn.runner", "agentdoc.agents.claude", ("spawn",), 11)
    face = Import("agentdoc.turn.runner", "agentdoc.agents", ("spawn",), 12)
    command = Import("agentdoc.cli.doctor", "agentdoc.agents.claude", ("CLAUDE",), 13)
    demo = Import("agentdoc.cli.demo", "agentdoc.agents.fakeapi", ("FakeMessagesAPI",), 14)
    assert reaches_protocol([protocol, face, command, demo]) == [
        "agentdoc.turn.runner:11 imports agentdoc.agents.claude",
        "agentdoc.cli.doctor:13 imports agentdoc.agents.claude",
    ]
    assert upward([up, fine]) == ["agentdoc.agents.claude.process:7 imports agentdoc.turn.runner"]
    assert private([deep, hidden, fine], lambda _package: {"parse"}) == [
        "agentdoc.turn.runner:8 reaches into agentdoc.document.merge",
        "agentdoc.turn.runner:8 imports merge_text, not in agentdoc.document.__all__",
        "agentdoc.daemon.service:9 imports StatusReporter, not in agentdoc.turn.__all__",
    ]


def _type_checking_names(package: str) -> set[str]:
    tree = ast.parse(all_modules()[package].read_text(encoding="utf-8"))
    blocks = [n for n in ast.walk(tree) if isinstance(n, ast.If) and _is_type_checking(n)]
    return {
        alias.asname or alias.name
        for block in blocks
        for node in ast.walk(block)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize(
    "package",
    [
        "agentdoc.daemon",
        "agentdoc.daemon.synced",
        "agentdoc.daemon.watch",
        "agentdoc.conversation",
        "agentdoc.turn",
        "agentdoc.records",
        "agentdoc.document",
        "agentdoc.search",
    ],
)
def test_lazy_exports_match_what_the_type_checker_sees(package: str) -> None:
    """The names loaded on first use are exactly those re-exported for mypy: no drift."""
    assert _type_checking_names(package) == set(importlib.import_module(package).__all__)


# The decision at the centre of the daemon's path (snapshot -> classify -> act) is pure: its
# modules import nothing that reaches the disk, a process, a thread or the clock, and within
# the daemon only each other. The I/O that feeds them is `daemon.capture`'s.
PURE_DAEMON = {
    "agentdoc.daemon.classify",
    "agentdoc.daemon.snapshot",
    "agentdoc.daemon.bulk",
    "agentdoc.daemon.prompts",
}
PURE_STDLIB = {"__future__", "dataclasses", "functools", "pathlib", "typing", "collections"}


def impure_imports(module: str) -> list[str]:
    tree = ast.parse(all_modules()[module].read_text(encoding="utf-8"))
    found = []
    for node in _import_nodes(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
        for name in names:
            top = (name or "").split(".")[0]
            if top != "agentdoc" and top not in PURE_STDLIB:
                found.append(f"{module}:{node.lineno} imports {name}")
    found += [
        f"{module}:{i.line} imports {i.target}"
        for i in imports_of(module)
        if i.target.startswith("agentdoc.daemon") and i.target not in PURE_DAEMON
    ]
    return found


def test_the_daemons_decision_is_pure() -> None:
    assert [bad for m in sorted(PURE_DAEMON) for bad in impure_imports(m)] == []


def test_the_purity_rule_catches_io() -> None:
    assert impure_imports("agentdoc.daemon.capture")  # git, the ledger, read_stable
    assert impure_imports("agentdoc.daemon.synced.gitguard")  # subprocess


# The tests' own layout: what a test needs from elsewhere comes from tests/support/ or a
# conftest.py fixture, never from another test module (whose set-up would then run, and whose
# tests a reader would have to know, to understand this one).
TESTS_FOLDER = PACKAGE.parent / "tests"


def _is_test_module(dotted: str) -> bool:
    last = dotted.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def imports_of_test_modules(path: Path, tests: Path = TESTS_FOLDER) -> list[str]:
    """Each import in the file at `path` of a test module or a conftest.py, as `file: module`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(tests.parent).parent.parts)
    found = []
    for node in ast.walk(tree):  # imports inside functions count too
        named: list[str] = []
        if isinstance(node, ast.Import):
            named = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from its own package upward
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            named = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        found += [name for name in named if name.startswith("tests") and _is_test_module(name)]
    return [f"{path.relative_to(tests.parent)}: {name}" for name in sorted(set(found))]


def test_no_test_module_imports_another() -> None:
    found = [
        hit for path in sorted(TESTS_FOLDER.rglob("*.py")) for hit in imports_of_test_modules(path)
    ]
    assert not found, "import it from tests/support/ or make it a fixture:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "from tests.daemon.test_daemon import DOC\n",
        "import tests.e2e.test_e2e_warm\n",
        "from tests.e2e import test_e2e_warm\n",
        "from .test_daemon import DOC\n",
        "def f():\n    from tests.conftest import wait_for\n",
    ],
)
def test_the_layout_rule_catches_a_test_module_import(tmp_path: Path, source: str) -> None:
    module = tmp_path / "tests" / "daemon" / "test_new.py"
    module.parent.mkdir(parents=True)
    module.write_text(source)
    assert imports_of_test_modules(module, tmp_path / "tests")
    module.write_text("from tests.support.daemon import DOC\nfrom . import helpers\n")
    assert not imports_of_test_modules(module, tmp_path / "tests")
