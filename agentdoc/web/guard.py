"""Who may use the page, checked before any route runs (an ASGI middleware).

- With a token (any address but loopback, or `--token`): a request carries it in the cookie
  the first visit with `?token=` set (HttpOnly, SameSite=Strict), else it gets 401.
- Without one (loopback): the Host must be a loopback name, so a web site that rebinds its
  own name to 127.0.0.1 reaches nothing.
- Every write (any method but GET and HEAD) must come from the page itself: its Origin (or
  Referer) names the host it was sent to, else 403 (cross-site request forgery).
- Every answer forbids framing, inline script and outside resources (the page's own CSP).
"""

from __future__ import annotations

import ipaddress
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "agentdoc_token"
SAFE_METHODS = ("GET", "HEAD")
HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    def __init__(self, app: ASGIApp, *, token: str | None, secure: bool = False) -> None:
        self.app = app
        self.token = token
        self.secure = secure

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self._refused(scope)
        if refused is not None:
            await refused(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _refused(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.token is None and not is_loopback(_hostname(host)):
            return PlainTextResponse(
                "agentdoc: this page answers only on 127.0.0.1 without a token "
                "(start it with --token to reach it through another name)",
                status_code=403,
            )
        if self.token is not None:
            given = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if "token" in given:
                return self._visit(scope, given)
            cookie = SimpleCookie(headers.get("cookie", ""))
            held = cookie[COOKIE].value if COOKIE in cookie else ""
            if not secrets.compare_digest(held.encode(), self.token.encode()):
                return PlainTextResponse(
                    "agentdoc: open the address `agentdoc serve-token` shows", status_code=401
                )
        if scope["method"] not in SAFE_METHODS and not _same_origin(headers, host):
            return PlainTextResponse(
                "agentdoc: a change must come from the page itself", status_code=403
            )
        return None

    def _visit(self, scope: Scope, given: dict[str, str]) -> Response:
        """The first visit with `?token=`: the cookie, and the same address without it."""
        assert self.token is not None
        if not secrets.compare_digest(given["token"].encode(), self.token.encode()):
            return PlainTextResponse("agentdoc: wrong token", status_code=401)
        rest = urlencode([(k, v) for k, v in given.items() if k != "token"])
        target = scope["path"] + (f"?{rest}" if rest else "")
        answer = RedirectResponse(target, status_code=303)
        answer.set_cookie(
            COOKIE,
            self.token,
            httponly=True,
            samesite="strict",
            secure=self.secure,
            max_age=400 * 24 * 3600,
        )
        return answer


def _same_origin(headers: Headers, host: str) -> bool:
    sent = headers.get("origin") or headers.get("referer")
    if not sent or sent == "null":
        return False
    return urlsplit(sent).netloc == host
