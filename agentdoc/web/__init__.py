"""The web page `agentdoc watch --serve` adds: the watched documents, read and written from a
browser (a phone first).

It runs inside the daemon's process (uvicorn on a thread of its own) and has no state of its
own: the page shows the files, and every action it offers is an edit of a file, made as an
editor's save is made (the daemon then sees it like any other save: the gate, the budget, the
merge with a reply streaming in), or the same request `agentdoc cancel` writes. `places` keeps
it to the documents under the watched roots; `token` and `guard` decide who may ask;
`render` turns markdown into the page's HTML, a block at a time; `live` carries the daemon's
own writes to an open page; `edits` are the page's edits of a document; `app` is the routes,
`pages` their HTML, and `server` runs it beside the daemon.
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.web.server import Running as Running
    from agentdoc.web.server import Serving as Serving
    from agentdoc.web.server import serve as serve
    from agentdoc.web.token import serve_token as serve_token
    from agentdoc.web.token import token_path as token_path

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "server": ("Running", "Serving", "serve"),
        "token": ("serve_token", "token_path"),
    },
)
