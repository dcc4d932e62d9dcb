"""The daemon's synced folders: what it takes from a folder other machines write too.

Whether a folder is synced and how a reply's writes are paced there (`pace`, the markers told
apart in `agentdoc.syncmarks` from the sync tools' table, `agentdoc.synctools`), which synced
folders this machine answers (`trust`, from the user's config) and which machine answers each
synced document (`claims`), the ignore entries that keep agentdoc's own state out of a sync
(`syncignore`, `agentdoc init-sync`), the conflict copies kept out of the way (`kept`), and git
as a sync: a checkout or pull is not a prompt (`gitguard`), and the background fetch of
`git: sync` documents (`gitpoll`). It holds no document state: the daemon's loop asks.

Other parts import the names in ``__all__`` from here; each loads its submodule on first use
(see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.daemon.synced.claims import Claims as Claims
    from agentdoc.daemon.synced.claims import adopt as adopt
    from agentdoc.daemon.synced.claims import machine_id as machine_id
    from agentdoc.daemon.synced.gitguard import git_busy as git_busy
    from agentdoc.daemon.synced.gitguard import written_by_git as written_by_git
    from agentdoc.daemon.synced.gitpoll import start_polling as start_polling
    from agentdoc.daemon.synced.kept import kept_copies as kept_copies
    from agentdoc.daemon.synced.kept import kept_dir as kept_dir
    from agentdoc.daemon.synced.pace import paced as paced
    from agentdoc.daemon.synced.pace import synced_root as synced_root
    from agentdoc.daemon.synced.syncignore import init_sync as init_sync
    from agentdoc.daemon.synced.trust import TrustList as TrustList
    from agentdoc.daemon.synced.trust import covers as covers
    from agentdoc.daemon.synced.trust import gone as gone
    from agentdoc.daemon.synced.trust import trust_folder as trust_folder
    from agentdoc.daemon.synced.trust import trusted_list as trusted_list
    from agentdoc.daemon.synced.trust import untrust_folder as untrust_folder

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "claims": ("Claims", "adopt", "machine_id"),
        "gitguard": ("git_busy", "written_by_git"),
        "gitpoll": ("start_polling",),
        "kept": ("kept_copies", "kept_dir"),
        "pace": ("paced", "synced_root"),
        "syncignore": ("init_sync",),
        "trust": ("TrustList", "covers", "gone", "trust_folder", "trusted_list", "untrust_folder"),
    },
)
