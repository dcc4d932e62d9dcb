"""The daemon's watch of the tree: filesystem events in, settled paths out.

Which folders and files to watch (`roots`), the observer and its per-folder watches
(`observing`, `watchlimit`: inotify's limits, out of which it polls), what one event means
(`fsevents`), the index of the tree the safety rescan checks cheaply (`tree`), and when a save is
over and its bytes whole (`settle`), put together by the `Watcher`. It knows file names and
stamps, never a document's state: the daemon above decides what a settled save means.

A room inside `agentdoc.daemon`: the daemon's modules import its modules, and what the
command line needs of it is on the daemon's face (``agentdoc.daemon``).
"""

# No names of its own: see the docstring.
__all__: list[str] = []
