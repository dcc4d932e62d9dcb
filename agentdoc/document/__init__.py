"""The markdown file: read it, find its turns, render replies into it, merge, write it safely.

Pure text functions (parse, frontmatter, splice, merge, render) plus the file I/O and the
thinking sidecar. Other packages import the names in ``__all__`` from here.

Names are imported on first use, so a command that needs one part (`agentdoc status`
reads a status file) does not pay for loading all of them.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentdoc.document.fileio import (
        NEW_FILE_MODE,
        TEMP_PREFIX,
        WriteLedger,
        atomic_write,
        decode,
        digest,
        read_bytes,
        read_text,
        write_bytes,
        write_text,
    )
    from agentdoc.document.frontmatter import LINE_BREAK, FrontmatterError, dominant_newline
    from agentdoc.document.frontmatter_edit import add_frontmatter, set_meta
    from agentdoc.document.parser import (
        Document,
        DocumentError,
        Turn,
        is_session_document,
        parse,
        seal_reply,
        strip_comments,
    )
    from agentdoc.document.render import render_body, render_final, render_problem
    from agentdoc.document.splice import (
        STREAMING_MARK,
        close_region,
        fill_region,
        find_region,
        new_nonce,
        open_reply,
    )
    from agentdoc.document.thinking import ThinkingSidecar, sidecar_link, sidecar_path

_MODULE_OF = {
    "NEW_FILE_MODE": "agentdoc.document.fileio",
    "TEMP_PREFIX": "agentdoc.document.fileio",
    "WriteLedger": "agentdoc.document.fileio",
    "atomic_write": "agentdoc.document.fileio",
    "decode": "agentdoc.document.fileio",
    "digest": "agentdoc.document.fileio",
    "read_bytes": "agentdoc.document.fileio",
    "read_text": "agentdoc.document.fileio",
    "write_bytes": "agentdoc.document.fileio",
    "write_text": "agentdoc.document.fileio",
    "LINE_BREAK": "agentdoc.document.frontmatter",
    "FrontmatterError": "agentdoc.document.frontmatter",
    "dominant_newline": "agentdoc.document.frontmatter",
    "add_frontmatter": "agentdoc.document.frontmatter_edit",
    "set_meta": "agentdoc.document.frontmatter_edit",
    "Document": "agentdoc.document.parser",
    "DocumentError": "agentdoc.document.parser",
    "Turn": "agentdoc.document.parser",
    "is_session_document": "agentdoc.document.parser",
    "parse": "agentdoc.document.parser",
    "seal_reply": "agentdoc.document.parser",
    "strip_comments": "agentdoc.document.parser",
    "render_body": "agentdoc.document.render",
    "render_final": "agentdoc.document.render",
    "render_problem": "agentdoc.document.render",
    "STREAMING_MARK": "agentdoc.document.splice",
    "close_region": "agentdoc.document.splice",
    "fill_region": "agentdoc.document.splice",
    "find_region": "agentdoc.document.splice",
    "new_nonce": "agentdoc.document.splice",
    "open_reply": "agentdoc.document.splice",
    "ThinkingSidecar": "agentdoc.document.thinking",
    "sidecar_link": "agentdoc.document.thinking",
    "sidecar_path": "agentdoc.document.thinking",
}

__all__ = [
    "LINE_BREAK",
    "NEW_FILE_MODE",
    "STREAMING_MARK",
    "TEMP_PREFIX",
    "Document",
    "DocumentError",
    "FrontmatterError",
    "ThinkingSidecar",
    "Turn",
    "WriteLedger",
    "add_frontmatter",
    "atomic_write",
    "close_region",
    "decode",
    "digest",
    "dominant_newline",
    "fill_region",
    "find_region",
    "is_session_document",
    "new_nonce",
    "open_reply",
    "parse",
    "read_bytes",
    "read_text",
    "render_body",
    "render_final",
    "render_problem",
    "seal_reply",
    "set_meta",
    "sidecar_link",
    "sidecar_path",
    "strip_comments",
    "write_bytes",
    "write_text",
]


def __getattr__(name: str) -> object:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value
