"""The daemon's watch of the tree: filesystem events in, settled paths out.

Which folders and files to watch (`roots`), the observer and its per-folder watches
(`observing`, `watchlimit`: inotify's limits, out of which it polls), what one event means
(`fsevents`), the index of the tree the safety rescan checks cheaply (`tree`), and when a save is
over and its bytes whole (`settle`), put together by the `Watcher`. It knows file names and
stamps, never a document's state: the daemon above decides what a settled save means.

Other parts import the names in ``__all__`` from here; each loads its submodule on first use
(see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.daemon.watch.settle import read_stable as read_stable
    from agentdoc.daemon.watch.tree import changed_ns as changed_ns
    from agentdoc.daemon.watch.tree import maybe_session as maybe_session
    from agentdoc.daemon.watch.tree import mtime_ns as mtime_ns
    from agentdoc.daemon.watch.tree import stamp_of as stamp_of
    from agentdoc.daemon.watch.tree import starts_as_session as starts_as_session
    from agentdoc.daemon.watch.tree import wanted_name as wanted_name
    from agentdoc.daemon.watch.watcher import Watcher as Watcher

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "settle": ("read_stable",),
        "tree": (
            "changed_ns",
            "maybe_session",
            "mtime_ns",
            "stamp_of",
            "starts_as_session",
            "wanted_name",
        ),
        "watcher": ("Watcher",),
    },
)
