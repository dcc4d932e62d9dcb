"""The markdown file: read it, find its turns, render replies into it, merge, write it safely.

Pure text functions (parse, frontmatter, splice, merge, render) plus the file I/O and the
thinking sidecar. Other packages import the names in ``__all__`` from here.
"""

from agentdoc.document.fileio import (
    NEW_FILE_MODE,
    TEMP_PREFIX,
    WriteLedger,
    atomic_write,
    decode,
    digest,
    fitting_name,
    read_bytes,
    read_text,
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
    "fitting_name",
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
    "write_text",
]
