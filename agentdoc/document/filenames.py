"""A document's name as other files are named after it, shown to people, or linked to."""

from __future__ import annotations

import hashlib
import os

NAME_MAX = 255  # bytes in one file name on Linux and macOS filesystems


def fitting_name(name: str, suffix: str) -> str:
    """``name + suffix``, or, when that is too long for a file name, a shortened name that is
    still unique: the start of `name`, a hash of all of it, then `suffix`.

    State files and sidecars are named after their document; a document whose own name is
    near the limit (255 bytes) would otherwise get state files no filesystem can create.
    """
    full = name + suffix
    if len(os.fsencode(full)) <= NAME_MAX:
        return full
    tag = "~" + hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    room = NAME_MAX - len(os.fsencode(tag + suffix))
    head = os.fsencode(name)[: max(room, 0)].decode("utf-8", "ignore")
    return head + tag + suffix


def shown_name(name: str) -> str:
    """A file name as text that can be shown and stored anywhere (a status file, a log line, a
    heading): bytes that are not UTF-8 and control characters (a newline) become escapes such
    as ``\\xe9`` and ``\\n``; every other name is returned as it is."""
    if name.isprintable():
        return name
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


_LINK_UNSAFE = frozenset(" %()<>[]\\")


def link_target(name: str) -> str:
    """A file name as the target of a markdown link: characters a link cannot hold as they are
    (spaces, brackets, newlines, bytes that are not UTF-8) percent-encoded, the rest kept."""
    out: list[str] = []
    for char in name:
        if char.isprintable() and char not in _LINK_UNSAFE:
            out.append(char)
        else:
            raw = char.encode("utf-8", "surrogateescape")
            out.append("".join(f"%{byte:02X}" for byte in raw))
    return "".join(out)
