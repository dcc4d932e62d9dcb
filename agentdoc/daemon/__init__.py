"""The daemon: notice saves, decide a turn is due, run turns, one daemon per folder tree.

Other packages import the names in ``__all__`` from here.

Names are imported on first use, so a command that needs one part (`agentdoc status`
reads a status file) does not pay for loading all of them.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdoc.daemon.lock import find_daemon
    from agentdoc.daemon.service import Daemon

_MODULE_OF = {
    "find_daemon": "agentdoc.daemon.lock",
    "Daemon": "agentdoc.daemon.service",
}

__all__ = ["Daemon", "find_daemon"]


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
