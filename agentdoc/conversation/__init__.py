"""The commands over a conversation's past turns: `undo` (take the last turns back, replies,
files and the session's memory of them), `fork` (copy a conversation through one exchange into
a new document), `archive` (move older exchanges into the archive file) and `new` (a fresh
session document).

Each is one module and one entry point, like a command of its own: it sits above
`agentdoc.turn` (it may ask which folder a turn works in, or commit as a turn does) and reads
and rewrites what turns left behind through `agentdoc.records`. A new command over a
conversation is a module here and a name in ``__all__``; other packages import those names
from here, each loading its submodule on first use (see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.conversation.archive import archive_document as archive_document
    from agentdoc.conversation.creating import create_document as create_document
    from agentdoc.conversation.forking import fork as fork
    from agentdoc.conversation.undoing import undo as undo

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "archive": ("archive_document",),
        "creating": ("create_document",),
        "forking": ("fork",),
        "undoing": ("undo",),
    },
)
