"""The page's HTML: a list of documents, and one document. Plain strings, every value escaped;
the script and the style sheet are static files of the package (no build step, no CDN)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from agentdoc.document import Asked
from agentdoc.web.states import Shown


@dataclass(frozen=True)
class Row:
    href: str
    rel: str  # the link's name: the path below the watched root
    shown: Shown
    when: str  # the file's time, for the reader


@dataclass(frozen=True)
class Found:
    href: str
    rel: str
    turn: int
    text: str


def href(root: int, rel: str) -> str:
    return f"/d/{root}/{quote(rel)}"


def _page(title: str, body: str, *, script: bool = True) -> str:
    js = '<script src="/static/page.js" defer></script>' if script else ""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        '<link rel="stylesheet" href="/static/page.css">'
        f"{js}</head><body>{body}</body></html>"
    )


def list_page(
    rows: Sequence[Row],
    *,
    query: str,
    found: Sequence[Found] | None,
    writable: bool,
    problem: str | None = None,
) -> str:
    parts = ["<header><h1>agentdoc</h1></header><main>"]
    parts.append(
        '<form class="search" method="get" action="/" role="search">'
        f'<input type="search" name="q" aria-label="Search" value="{escape(query)}" '
        'placeholder="Search conversations"><button type="submit">Search</button></form>'
    )
    if problem:
        parts.append(f'<p class="problem" role="alert">{escape(problem)}</p>')
    if found is not None:
        parts.append(f"<h2>Found for “{escape(query)}”</h2>")
        if not found:
            parts.append("<p>Nothing found.</p>")
        parts.append('<ul class="found">')
        for hit in found:
            parts.append(
                f'<li><a href="{escape(hit.href)}">{escape(hit.rel)}#turn-{hit.turn}</a>'
                f"<p>{escape(hit.text)}</p></li>"
            )
        parts.append("</ul>")
    if writable:
        parts.append(
            '<form class="new" method="post" action="/new">'
            '<input name="name" aria-label="Name" placeholder="name (optional)" '
            'autocomplete="off"><button type="submit">New document</button></form>'
        )
    parts.append('<h2>Documents</h2><ul class="documents">')
    for row in rows:
        parts.append(
            f'<li><a href="{escape(row.href)}">{escape(row.rel)}</a>'
            f'<span class="state state-{row.shown.kind}">{escape(row.shown.words)}</span>'
            f"<time>{escape(row.when)}</time></li>"
        )
    if not rows:
        parts.append("<li>No session documents yet.</li>")
    parts.append("</ul></main>")
    return _page("agentdoc", "".join(parts))


def asked_panel(asked: Sequence[Asked], writable: bool, action: str) -> str:
    """The open permission request, with Allow / Deny (empty when none waits)."""
    if not asked:
        return ""
    first = asked[0]
    buttons = ""
    if writable:
        buttons = (
            f'<form method="post" action="{escape(action)}" class="answer">'
            f'<input type="hidden" name="nonce" value="{escape(first.nonce)}">'
            '<label>Reason <input name="reason" autocomplete="off" '
            'placeholder="why not (optional)"></label>'
            '<div class="buttons"><button type="submit" name="behavior" value="allow">'
            "Allow</button>"
            '<button type="submit" name="behavior" value="deny" class="deny">Deny</button>'
            "</div></form>"
        )
    return (
        '<section class="asked" aria-label="Permission request">'
        f"<h2>Permission: {escape(first.tool)}</h2>"
        f"<pre>{escape(first.input)}</pre>{buttons}</section>"
    )


def document_page(
    *,
    title: str,
    base: str,
    events: str,
    head: str,
    tail: str,
    shown: Shown,
    asked: str,
    thinking: str | None,
    writable: bool,
) -> str:
    links = '<a href="/">Documents</a>'
    if thinking is not None:
        links += f' <a href="{escape(thinking)}">Thinking</a>'
    controls = ""
    if writable:
        hidden = "" if shown.busy else " hidden"
        controls = (
            f'<form method="post" action="{escape(base)}/cancel" class="cancel"{hidden}>'
            '<button type="submit">Cancel</button></form>'
            f'<form method="post" action="{escape(base)}/prompt" class="prompt">'
            '<label for="prompt">Prompt</label>'
            '<textarea id="prompt" name="prompt" rows="3" '
            'placeholder="Your prompt, sent when you tap Send"></textarea>'
            '<button type="submit">Send</button></form>'
        )
    body = (
        f"<header><nav>{links}</nav><h1>{escape(title)}</h1>"
        f'<p id="state" role="status" class="state state-{shown.kind}">'
        f"{escape(shown.words)}</p></header>"
        f'<main data-events="{escape(events)}">'
        f'<article id="doc"><div id="head">{head}</div><div id="tail">{tail}</div></article>'
        f'<div id="asked">{asked}</div>'
        f'<p id="problem" class="problem" role="alert"></p>{controls}</main>'
    )
    return _page(title, body)


def plain_page(title: str, html: str) -> str:
    """A page to read only (the thinking sidecar)."""
    body = (
        f'<header><nav><a href="/">Documents</a></nav><h1>{escape(title)}</h1></header>'
        f'<main><article id="doc">{html}</article></main>'
    )
    return _page(title, body, script=False)


def message_page(title: str, words: str) -> str:
    body = f'<main><h1>{escape(title)}</h1><p>{escape(words)}</p><a href="/">Documents</a></main>'
    return _page(title, body, script=False)
