"""Package exports that load their module on first use.

A package ``__init__`` lists, per submodule, the names other packages may import; a command
that needs one of them (`agentdoc status` reads a status file) then loads that submodule only,
not the parser, the models and the watcher behind the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_exports(
    package: str, names_by_module: Mapping[str, tuple[str, ...]]
) -> tuple[list[str], Callable[[str], Any]]:
    """``(__all__, __getattr__)`` for ``package``: each name comes from its submodule."""
    module_of = {name: module for module, names in names_by_module.items() for name in names}
    namespace = import_module(package).__dict__

    def load(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value  # later lookups skip this function
        return value

    return sorted(module_of), load
