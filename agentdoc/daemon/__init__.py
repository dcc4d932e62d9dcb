"""The daemon: notice saves, decide a turn is due, run turns, one daemon per folder tree.

Other packages import the names in ``__all__`` from here.
"""

from agentdoc.daemon.lock import find_daemon
from agentdoc.daemon.service import Daemon

__all__ = ["Daemon", "find_daemon"]
