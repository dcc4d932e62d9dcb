"""The daemon: notice saves, decide a turn is due, run turns, one daemon per folder tree.

Its loop (`service`) and the parts it is composed of decide and act; the watch of the tree is
`watch/` (settled paths in), what synced folders and git as a sync bring is `synced/`.

Other packages import the names in ``__all__`` from here; each loads its submodule on first
use (see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.daemon.events import Stop as Stop
    from agentdoc.daemon.gate import own_command as own_command
    from agentdoc.daemon.lock import find_daemon as find_daemon
    from agentdoc.daemon.lock import stop_daemon as stop_daemon
    from agentdoc.daemon.pool import WarmPool as WarmPool
    from agentdoc.daemon.service import Daemon as Daemon
    from agentdoc.daemon.synced.claims import adopt as adopt
    from agentdoc.daemon.synced.claims import machine_id as machine_id
    from agentdoc.daemon.synced.kept import kept_copies as kept_copies
    from agentdoc.daemon.synced.pace import paced as paced
    from agentdoc.daemon.synced.pace import synced_root as synced_root
    from agentdoc.daemon.synced.syncignore import init_sync as init_sync
    from agentdoc.daemon.synced.trust import gone as gone
    from agentdoc.daemon.synced.trust import trust_folder as trust_folder
    from agentdoc.daemon.synced.trust import trusted_list as trusted_list
    from agentdoc.daemon.synced.trust import untrust_folder as untrust_folder
    from agentdoc.daemon.watch.tree import wanted_name as wanted_name

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "events": ("Stop",),
        "gate": ("own_command",),
        "lock": ("find_daemon", "stop_daemon"),
        "pool": ("WarmPool",),
        "service": ("Daemon",),
        "synced.claims": ("adopt", "machine_id"),
        "synced.kept": ("kept_copies",),
        "synced.pace": ("paced", "synced_root"),
        "synced.syncignore": ("init_sync",),
        "synced.trust": ("gone", "trust_folder", "trusted_list", "untrust_folder"),
        "watch.tree": ("wanted_name",),
    },
)
