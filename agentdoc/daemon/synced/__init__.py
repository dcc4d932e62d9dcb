"""The daemon's synced folders: what it takes from a folder other machines write too.

Whether a folder is synced and how a reply's writes are paced there (`pace`, the markers told
apart in `agentdoc.syncmarks` from the sync tools' table, `agentdoc.synctools`), which synced
folders this machine answers (`trust`, from the user's config) and which machine answers each
synced document (`claims`), the ignore entries that keep agentdoc's own state out of a sync
(`syncignore`, `agentdoc init-sync`), the conflict copies kept out of the way (`kept`), and git
as a sync: a checkout or pull is not a prompt (`gitguard`), and the background fetch of
`git: sync` documents (`gitpoll`). It holds no document state: the daemon's loop asks.

A room inside `agentdoc.daemon`: the daemon's modules import its modules, and what the
command line needs of it is on the daemon's face (``agentdoc.daemon``).
"""

# No names of its own: see the docstring.
__all__: list[str] = []
