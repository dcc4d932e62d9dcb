"""The markdown file: read it, find its turns, render replies into it, merge, write it safely.

Pure text functions (parse, frontmatter, splice, merge, render) plus the file I/O and the
thinking sidecar. Other packages import the names in ``__all__`` from here; each loads its
submodule on first use (see :mod:`agentdoc.lazy`).
"""

from typing import TYPE_CHECKING

from agentdoc.lazy import lazy_exports

if TYPE_CHECKING:  # names re-exported for the type checker; loaded lazily at run time
    from agentdoc.document.approval import Answer as Answer
    from agentdoc.document.approval import Asked as Asked
    from agentdoc.document.approval import Behavior as Behavior
    from agentdoc.document.approval import asked_in as asked_in
    from agentdoc.document.approval import find_block as find_block
    from agentdoc.document.approval import protected_files as protected_files
    from agentdoc.document.approval import read_answer as read_answer
    from agentdoc.document.approval import render_approval as render_approval
    from agentdoc.document.approval import render_decision as render_decision
    from agentdoc.document.approval import replace_block as replace_block
    from agentdoc.document.approval import tick as tick
    from agentdoc.document.approval import touches as touches
    from agentdoc.document.archive import HEADER_START as HEADER_START
    from agentdoc.document.archive import Moved as Moved
    from agentdoc.document.archive import archive_path as archive_path
    from agentdoc.document.archive import move as move
    from agentdoc.document.byproducts import byproduct_kind as byproduct_kind
    from agentdoc.document.byproducts import conflict_original as conflict_original
    from agentdoc.document.byproducts import is_byproduct as is_byproduct
    from agentdoc.document.comments import strip_comments as strip_comments
    from agentdoc.document.fileio import NEW_FILE_MODE as NEW_FILE_MODE
    from agentdoc.document.fileio import TEMP_PREFIX as TEMP_PREFIX
    from agentdoc.document.fileio import atomic_write as atomic_write
    from agentdoc.document.fileio import check_replaceable as check_replaceable
    from agentdoc.document.fileio import check_writable as check_writable
    from agentdoc.document.fileio import decode as decode
    from agentdoc.document.fileio import on_written as on_written
    from agentdoc.document.fileio import read_bytes as read_bytes
    from agentdoc.document.fileio import read_text as read_text
    from agentdoc.document.fileio import write_bytes as write_bytes
    from agentdoc.document.fileio import write_text as write_text
    from agentdoc.document.filenames import fitting_name as fitting_name
    from agentdoc.document.filenames import shown_name as shown_name
    from agentdoc.document.frontmatter import LINE_BREAK as LINE_BREAK
    from agentdoc.document.frontmatter import FrontmatterError as FrontmatterError
    from agentdoc.document.frontmatter import dominant_newline as dominant_newline
    from agentdoc.document.frontmatter_edit import add_frontmatter as add_frontmatter
    from agentdoc.document.frontmatter_edit import set_meta as set_meta
    from agentdoc.document.ledger import PrefixDigest as PrefixDigest
    from agentdoc.document.ledger import WriteLedger as WriteLedger
    from agentdoc.document.ledger import digest as digest
    from agentdoc.document.merge import merge_text as merge_text
    from agentdoc.document.ownopens import note_own_open as note_own_open
    from agentdoc.document.ownopens import take_own_open as take_own_open
    from agentdoc.document.parser import Document as Document
    from agentdoc.document.parser import DocumentError as DocumentError
    from agentdoc.document.parser import Turn as Turn
    from agentdoc.document.parser import is_session_document as is_session_document
    from agentdoc.document.parser import is_unanswered as is_unanswered
    from agentdoc.document.parser import parse as parse
    from agentdoc.document.parser import parse_archive as parse_archive
    from agentdoc.document.parser import parsed_or_none as parsed_or_none
    from agentdoc.document.parser import session_problem as session_problem
    from agentdoc.document.rebase import Merged as Merged
    from agentdoc.document.rebase import merge_copy as merge_copy
    from agentdoc.document.rebase import merge_document as merge_document
    from agentdoc.document.render import NOT_ASKED_HINT as NOT_ASKED_HINT
    from agentdoc.document.render import refused_unasked as refused_unasked
    from agentdoc.document.render import render_body as render_body
    from agentdoc.document.render import render_final as render_final
    from agentdoc.document.render import render_refusal as render_refusal
    from agentdoc.document.render import render_tool as render_tool
    from agentdoc.document.render import retry_words as retry_words
    from agentdoc.document.render import summarize_input as summarize_input
    from agentdoc.document.seal import escape_reply as escape_reply
    from agentdoc.document.seal import seal_reply as seal_reply
    from agentdoc.document.splice import STREAMING_MARK as STREAMING_MARK
    from agentdoc.document.splice import ReplyMarkers as ReplyMarkers
    from agentdoc.document.splice import Spliced as Spliced
    from agentdoc.document.thinking import ThinkingSidecar as ThinkingSidecar
    from agentdoc.document.thinking import drop_thinking as drop_thinking
    from agentdoc.document.thinking import sidecar_link as sidecar_link
    from agentdoc.document.thinking import sidecar_path as sidecar_path

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "approval": (
            "Answer",
            "Asked",
            "Behavior",
            "asked_in",
            "find_block",
            "protected_files",
            "read_answer",
            "render_approval",
            "render_decision",
            "replace_block",
            "tick",
            "touches",
        ),
        "archive": ("HEADER_START", "Moved", "archive_path", "move"),
        "byproducts": ("byproduct_kind", "conflict_original", "is_byproduct"),
        "ownopens": ("note_own_open", "take_own_open"),
        "fileio": (
            "NEW_FILE_MODE",
            "TEMP_PREFIX",
            "atomic_write",
            "check_replaceable",
            "check_writable",
            "decode",
            "on_written",
            "read_bytes",
            "read_text",
            "write_bytes",
            "write_text",
        ),
        "filenames": ("fitting_name", "shown_name"),
        "ledger": ("PrefixDigest", "WriteLedger", "digest"),
        "comments": ("strip_comments",),
        "merge": ("merge_text",),
        "frontmatter": ("LINE_BREAK", "FrontmatterError", "dominant_newline"),
        "frontmatter_edit": ("add_frontmatter", "set_meta"),
        "parser": (
            "Document",
            "DocumentError",
            "Turn",
            "is_session_document",
            "is_unanswered",
            "parse",
            "parsed_or_none",
            "session_problem",
            "parse_archive",
        ),
        "render": (
            "NOT_ASKED_HINT",
            "render_body",
            "render_final",
            "render_refusal",
            "render_tool",
            "refused_unasked",
            "retry_words",
            "summarize_input",
        ),
        "rebase": ("Merged", "merge_copy", "merge_document"),
        "seal": ("escape_reply", "seal_reply"),
        "splice": (
            "STREAMING_MARK",
            "ReplyMarkers",
            "Spliced",
        ),
        "thinking": ("ThinkingSidecar", "drop_thinking", "sidecar_link", "sidecar_path"),
    },
)
