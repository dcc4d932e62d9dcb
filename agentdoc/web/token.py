"""The page's token: required on any address but loopback, made once, kept private.

It lives beside the user's config file (`serve-token`, readable by its owner only), never in a
watched tree. `agentdoc serve-token` shows it, `--renew` makes a new one (the old one stops
working at the daemon's next start).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from agentdoc.config import config_path
from agentdoc.errors import AgentdocError


def token_path() -> Path:
    return config_path().parent / "serve-token"


def serve_token(*, renew: bool = False) -> str:
    """The token (made now if there is none, or if `renew`)."""
    path = token_path()
    if not renew:
        try:
            found = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            found = ""
        except OSError as exc:
            raise AgentdocError(f"cannot read the page's token {path}: {exc.strerror}") from exc
        if found:
            return found
    token = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(token + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise AgentdocError(f"cannot write the page's token {path}: {exc.strerror}") from exc
    return token
