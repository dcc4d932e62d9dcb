"""The page's routes (Starlette): the list, a document, its live stream, and the four edits.

Reads are of the files as they are now; writes are `edits` of the document (or the cancel
request `agentdoc cancel` writes). A path that is not a document under a watched root is 404,
whatever it looks like; a document the daemon holds (an untrusted synced folder) is shown,
never answered from here; with `read_only` the page offers no edit and refuses every one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agentdoc.conversation import create_document
from agentdoc.document import (
    DocumentError,
    asked_in,
    decode,
    is_session_document,
    read_bytes,
    shown_name,
    sidecar_path,
)
from agentdoc.errors import AgentdocError
from agentdoc.records import read_status
from agentdoc.web import edits, pages
from agentdoc.web.live import Hub
from agentdoc.web.places import Root, find, place_of, safe_parts
from agentdoc.web.render import Renderer, body_start, tail_start
from agentdoc.web.searching import search_roots
from agentdoc.web.states import Shown, shown

log = logging.getLogger(__name__)

KEEPALIVE = 15.0  # seconds between comments on a quiet stream (proxies close idle ones)
# A reply's flush writes the document and then its status: a page woken by the first waits
# this long for the second, and renders once for both (well inside the 100 ms a write may
# take to reach the page).
TOGETHER = 0.01
TRUST_LOOK = 2.0  # seconds between looks at whether the document's folder is trusted
STATIC = Path(__file__).with_name("static")
_TITLE = re.compile(r"^# (.+)$", re.M)


@dataclass
class Site:
    """What the routes work with: the watched roots, and the daemon's view of them."""

    roots: list[Root]
    documents: Callable[[], list[Path]]  # the session documents the daemon follows
    untrusted: Callable[[Path], str | None] = lambda _p: None
    marker: str | None = None  # the submit marker, for documents sent on the marker only
    default_trigger: str = "save"
    read_only: bool = False
    hub: Hub = field(default_factory=Hub)
    renderer: Renderer = field(default_factory=Renderer)


def make_app(site: Site, *, token: str | None, secure: bool = False) -> Starlette:
    from starlette.middleware import Middleware

    from agentdoc.web.guard import Guard

    routes = [
        Route("/", partial(_list, site), methods=["GET"]),
        Route("/new", partial(_new, site), methods=["POST"]),
        Route(
            "/d/{root:int}/{rel:path}/prompt", partial(_act, site, what="prompt"), methods=["POST"]
        ),
        Route(
            "/d/{root:int}/{rel:path}/answer", partial(_act, site, what="answer"), methods=["POST"]
        ),
        Route(
            "/d/{root:int}/{rel:path}/cancel", partial(_act, site, what="cancel"), methods=["POST"]
        ),
        Route("/d/{root:int}/{rel:path}", partial(_document, site), methods=["GET"]),
        Route("/events/{root:int}/{rel:path}", partial(_events, site), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    middleware = [Middleware(Guard, token=token, secure=secure)]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        site.hub.start(asyncio.get_running_loop())
        yield

    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _not_found() -> Response:
    return HTMLResponse(pages.message_page("Not found", "No such document here."), 404)


def _located(site: Site, request: Request) -> tuple[int, str, Path] | None:
    root, rel = request.path_params["root"], request.path_params["rel"]
    path = find(site.roots, root, rel)
    return None if path is None else (root, rel, path)


# -- the list --------------------------------------------------------------------------------


async def _list(site: Site, request: Request) -> Response:
    query = request.query_params.get("q", "").strip()
    rows = await run_in_threadpool(_rows, site)
    found, problem = None, None
    if query:
        try:
            found = await run_in_threadpool(search_roots, site.roots, query)
        except AgentdocError as exc:
            problem = str(exc)
    page = pages.list_page(
        rows, query=query, found=found, writable=_writable(site), problem=problem
    )
    return HTMLResponse(page)


def _writable(site: Site) -> bool:
    return not site.read_only and any(r.only is None for r in site.roots)


def _rows(site: Site) -> list[pages.Row]:
    dated: list[tuple[float, pages.Row]] = []
    for path in site.documents():
        place = place_of(site.roots, path)
        if place is None or safe_parts(place.rel) is None:
            continue
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))
        state = shown(read_status(path), site.untrusted(path))
        dated.append((mtime, pages.Row(pages.href(place.root, place.rel), place.rel, state, when)))
    return [row for _, row in sorted(dated, key=lambda d: -d[0])]


# -- one document ----------------------------------------------------------------------------


@dataclass(frozen=True)
class View:
    head: str  # the markdown before the last exchange
    tail: str  # the last exchange: what a streaming reply changes
    shown: Shown
    asked: str  # the permission panel's HTML


def _view(site: Site, path: Path, root: int, rel: str, untrusted: str | None = None) -> View:
    text = decode(path, read_bytes(path))
    cut = tail_start(text)
    tail = text[cut:]
    state = shown(read_status(path), untrusted)
    writable = not site.read_only and untrusted is None
    action = pages.href(root, rel) + "/answer"
    return View(
        text[body_start(text) : cut],
        tail,
        state,
        pages.asked_panel(asked_in(tail), writable, action),
    )


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


async def _document(site: Site, request: Request) -> Response:
    located = _located(site, request)
    if located is None:
        return _not_found()
    root, rel, path = located
    try:
        text = await run_in_threadpool(lambda: decode(path, read_bytes(path)))
    except AgentdocError:
        return _not_found()
    if not is_session_document(text):
        return await _sidecar(site, path, text)
    view = await run_in_threadpool(_view, site, path, root, rel, site.untrusted(path))
    head, tail = await run_in_threadpool(
        lambda: (site.renderer.render(view.head), site.renderer.render(view.tail))
    )
    sidecar = sidecar_path(path)
    thinking = None
    if sidecar.is_file():
        thinking = pages.href(root, (Path(rel).parent / sidecar.name).as_posix())
    title = _TITLE.search(text)
    page = pages.document_page(
        title=title.group(1).strip() if title else shown_name(path.name),
        base=pages.href(root, rel),
        events=f"/events/{root}/{rel}?h={_digest(view.head)}",
        head=head,
        tail=tail,
        shown=view.shown,
        asked=view.asked,
        thinking=thinking,
        writable=not site.read_only,
    )
    return HTMLResponse(page)


async def _sidecar(site: Site, path: Path, text: str) -> Response:
    """A thinking sidecar, only beside a session document (its one tap away)."""
    stem = path.name.removesuffix(".thinking.md")
    document = path.with_name(stem + ".md")
    if stem == path.name or sidecar_path(document) != path or not document.is_file():
        return _not_found()
    try:
        if not is_session_document(decode(document, read_bytes(document))):
            return _not_found()
    except AgentdocError:
        return _not_found()
    html = await run_in_threadpool(site.renderer.render, text)
    return HTMLResponse(pages.plain_page(f"Thinking: {shown_name(document.name)}", html))


# -- the live stream -------------------------------------------------------------------------


async def _events(site: Site, request: Request) -> Response:
    located = _located(site, request)
    if located is None:
        return _not_found()
    root, rel, path = located
    return StreamingResponse(
        _stream(site, path, root, rel, request.query_params.get("h", "")),
        media_type="text/event-stream",
        headers={"x-accel-buffering": "no"},
    )


async def _stream(site: Site, path: Path, root: int, rel: str, known: str) -> AsyncIterator[str]:
    """The document's view whenever it (or its status) is written: the last exchange each
    time, the part before it only when that changed too."""
    woken = site.hub.follow(path)
    head: str | None = None
    sent = ""
    untrusted, looked = None, float("-inf")
    try:
        while True:
            woken.clear()
            if time.monotonic() - looked > TRUST_LOOK:  # a walk up the folders: not per write
                untrusted, looked = site.untrusted(path), time.monotonic()
            try:
                view = _view(site, path, root, rel, untrusted)
            except AgentdocError:
                yield "event: gone\ndata: {}\n\n"
                return
            message: dict[str, object] = {
                "tail": site.renderer.render(view.tail),
                "kind": view.shown.kind,
                "words": view.shown.words,
                "busy": view.shown.busy,
                "asked": view.asked,
            }
            if view.head != head:
                if head is not None or _digest(view.head) != known:
                    message["head"] = site.renderer.render(view.head)
                head = view.head
            data = json.dumps(message)
            if data != sent:
                sent = data
                yield f"data: {data}\n\n"
            try:
                await asyncio.wait_for(woken.wait(), KEEPALIVE)
            except TimeoutError:
                yield ": still here\n\n"
                continue
            await asyncio.sleep(TOGETHER)
    finally:
        site.hub.leave(path, woken)


# -- edits -----------------------------------------------------------------------------------


async def _form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", "replace")
    return dict(parse_qsl(body, keep_blank_values=True))


def _done(request: Request, target: str, error: str | None = None) -> Response:
    """JSON for the page's script, a redirect (or a page saying why) for a plain form."""
    if "application/json" in request.headers.get("accept", ""):
        if error is not None:
            return JSONResponse({"error": error}, status_code=409)
        return JSONResponse({"ok": True, "href": target})
    if error is not None:
        return HTMLResponse(pages.message_page("Not done", error), 409)
    return RedirectResponse(target, status_code=303)


async def _act(site: Site, request: Request, what: str) -> Response:
    if site.read_only:
        return PlainTextResponse("agentdoc: this page is read-only (--read-only)", 403)
    located = _located(site, request)
    if located is None:
        return _not_found()
    root, rel, path = located
    form = await _form(request)
    held = site.untrusted(path)
    if held is not None:
        return _done(request, pages.href(root, rel), f"held: {held}")
    try:
        marker = partial(_marker, site)
        await run_in_threadpool(edits.apply_form, path, what, form, marker)
    except (AgentdocError, DocumentError) as exc:
        return _done(request, pages.href(root, rel), str(exc))
    return _done(request, pages.href(root, rel))


def _marker(site: Site, text: str) -> str | None:
    """The submit marker a prompt added to this document ends with, if it is sent on one."""
    from agentdoc.document import parse

    try:
        trigger = parse(text).meta.trigger or site.default_trigger
    except DocumentError:
        return None
    return site.marker if trigger == "marker" else None


_NAME = re.compile(r"[^\w.-]+")


async def _new(site: Site, request: Request) -> Response:
    if not _writable(site):
        return PlainTextResponse("agentdoc: this page makes no documents here", 403)
    form = await _form(request)
    name = _NAME.sub("-", form.get("name", "").strip()).strip("-.")
    if not name:
        name = time.strftime("conversation-%Y%m%d-%H%M%S")
    if not name.endswith(".md"):
        name += ".md"
    index, root = next((i, r) for i, r in enumerate(site.roots) if r.only is None)
    try:
        await run_in_threadpool(create_document, root.folder / name)
    except AgentdocError as exc:
        return _done(request, "/", str(exc))
    return _done(request, pages.href(index, name))
