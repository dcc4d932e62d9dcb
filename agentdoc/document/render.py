"""Turning a reply snapshot into the markdown that goes into the document (pure).

Text parts are sealed (see `document.seal_reply`) so model text can never open a turn heading or
leave a fence open that would swallow the user's next prompt. Tool calls become folded
``<details>`` blocks in place. A failed or interrupted turn keeps its partial text and ends in a
``> [!WARNING]`` callout that says what failed and what to do.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from typing import Any

from agentdoc.agents import Reply, Retrying, TextPart, ToolPart
from agentdoc.document.parser import UNANSWERED_MARK
from agentdoc.document.seal import seal_reply

RESULT_PREVIEW_LINES = 8
RESULT_PREVIEW_CHARS = 600


def render_body(reply: Reply, *, final: bool, approvals: Mapping[str, str] | None = None) -> str:
    """The reply region's markdown: text, tool blocks, and (while streaming) a retry notice.

    `approvals` (tool use id → markdown) are the permission blocks or decisions of the turn,
    each shown right after its tool's block (at the end if that tool is not in the reply).
    """
    chunks: list[str] = []
    extra = dict(approvals or {})
    for part in reply.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                chunks.append(seal_reply(part.text))
        elif isinstance(part, ToolPart):
            chunks.append(render_tool(part))
            if part.tool_use_id in extra:
                chunks.append(extra.pop(part.tool_use_id))
    chunks.extend(extra.values())
    if not final and reply.retry is not None and not reply.done:
        chunks.append(render_retry(reply.retry))
    return "\n\n".join(chunks)


def render_retry(retry: Retrying) -> str:
    """The live notice shown while the agent waits to retry a failed API request."""
    return f"*{retry_words(retry)}…*"


def retry_words(retry: Retrying) -> str:
    """What the agent is retrying and when, as far as it said."""
    known = [str(v) for v in (retry.error_status, retry.error) if v not in (None, "", "unknown")]
    what = " ".join(known) or "no answer"
    tries = f" {retry.attempt}/{retry.max_retries}" if retry.max_retries is not None else ""
    if retry.delay_ms is None:
        after = "" if tries else f" (attempt {retry.attempt + 1})"
        return f"API error ({what}): retrying{tries}{after}"
    seconds = retry.delay_ms / 1000
    delay = f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"
    return f"API error ({what}): retrying{tries} in {delay} s"


# The argument that says what a tool call is about, best first: the keys agents' tools name their
# paths and commands by (snake_case or camelCase, a shell's `cmd`).
MAIN_ARGUMENTS = (
    "file_path",
    "filePath",
    "absolute_path",
    "path",
    "dir_path",
    "command",
    "cmd",
    "pattern",
    "url",
    "query",
    "description",
)


def summarize_input(name: str, tool_input: dict[str, Any], title: str | None = None) -> str:
    """The tool call's main argument as text, else the agent's own title for it, else its
    input as plain JSON (never escaped for HTML: markdown shows it as it is)."""
    for key in MAIN_ARGUMENTS:
        value = tool_input.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            value = " ".join(value)  # an argv (a `command` given as a list)
        if isinstance(value, str) and value.strip():
            return _short(value.strip())
    if title and title != name:
        return _short(title)
    shown = {k: v for k, v in tool_input.items() if k != "locations"}
    if not shown:
        paths = tool_input.get("locations")
        return _short(" ".join(map(str, paths))) if isinstance(paths, list) else ""
    return _short(json.dumps(shown, ensure_ascii=False))


def _short(text: str) -> str:
    text = " ".join(text.split())  # one line in a summary
    return text if len(text) <= 80 else text[:77] + "…"


def _fence_for(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def _preview(text: str) -> str:
    lines = text.splitlines()
    short = "\n".join(lines[:RESULT_PREVIEW_LINES])
    if len(short) > RESULT_PREVIEW_CHARS:
        short = short[:RESULT_PREVIEW_CHARS]
    if short != text.rstrip("\n"):
        short += f"\n… ({_count(len(lines), 'line')}, {_count(len(text), 'character')} in all)"
    return short


# The CLI's words when it refuses a tool it had no way to ask about (a one-shot run: no
# permission prompt tool); a person's own "deny" reads differently.
_NOT_ASKED = re.compile(r"requested permissions? to .* but you haven't granted it", re.S)
NOT_ASKED_HINT = (
    "agentdoc could not ask you: `agentdoc run` asks on the terminal only when it runs in one. "
    "Keep `agentdoc watch` running to approve tools in the document, or allow them in the "
    "agentdoc config (`permission_mode`, `allowed_tools`)."
)


def refused_unasked(part: ToolPart) -> bool:
    """The CLI refused this tool without asking anyone."""
    return part.is_error and bool(part.result) and bool(_NOT_ASKED.search(part.result or ""))


def render_tool(part: ToolPart) -> str:
    argument = summarize_input(part.name, part.input, part.title)
    summary = f"{part.name}: {argument}" if argument else part.name
    if part.result is None:
        status = "running…"
    elif part.is_error:
        status = "failed"
    else:
        status = _count(len(part.result.splitlines()), "line")
    # Only what would open a tag or an entity is escaped; quotes read as they are.
    lines = [f"<details><summary>🔧 {html.escape(summary, quote=False)} — {status}</summary>", ""]
    if part.result:
        preview = _preview(part.result)
        fence = _fence_for(preview)
        lines += [f"{fence}text", preview, fence, ""]
    if refused_unasked(part):
        lines += [f"*{NOT_ASKED_HINT}*", ""]
    lines.append("</details>")
    return "\n".join(lines)


def render_problem(reply: Reply, document_name: str, *, pending: bool = False) -> str | None:
    """The warning callout for a failed or interrupted turn, or None if it succeeded.

    With `pending` (nothing of the reply to show) the callout stands in for the reply: it starts
    with the unanswered mark, so the prompt above stays pending and the next attempt replaces it.
    """
    if reply.error is None and not reply.interrupted:
        return _stopped_early(reply)
    if pending:
        # A save with no change is indistinguishable from our own write, hence "any change".
        retry = (
            "Your prompt above is still pending: to send it again, save the document with any "
            f"change (deleting this notice will do), or run `agentdoc run {document_name}`."
        )
    else:
        # The prompt has an answer (the partial text), so it is no longer pending: to retry,
        # it must be written again under the fresh `## User` heading that follows the reply.
        retry = (
            "To retry, write the prompt again under the `## User` heading below, then save "
            f"(or run `agentdoc run {document_name}`)."
        )
    if reply.error is not None:
        head = f"**The reply failed:** {_one_line(reply.error)}"
    elif reply.stop_reason == "cancelled":
        # Same opening as any interruption: history.py knows an unfinished reply by it.
        head = "**The reply was interrupted** before it finished: the turn was cancelled."
    else:
        head = "**The reply was interrupted** before it finished."
    lines = [UNANSWERED_MARK] if pending else []
    lines += ["> [!WARNING]", f"> {head}"]
    # The agent's protocol classified its error (agents/): the document never reads its text.
    hint = reply.failure.advice if reply.error is not None and reply.failure else None
    if hint:
        lines.append(f"> {hint}")
    if reply.text().strip() and reply.partial_kept:
        lines.append("> The text above is partial; the agent keeps it in its session.")
    elif reply.text().strip():
        lines.append("> The text above is partial, and the agent will not remember it.")
    lines.append(f"> {retry}")
    return "\n".join(lines)


def render_refusal(message: str, document_name: str) -> str:
    """The notice for a prompt refused before anything was sent; the prompt stays pending."""
    return "\n".join(
        [
            UNANSWERED_MARK,
            "> [!WARNING]",
            f"> **Not sent:** {_one_line(message)}",
            "> Your prompt above is still pending: change it and save, or run "
            f"`agentdoc run {document_name}` once the file can be sent.",
        ]
    )


# Turns that ended normally but short of a whole answer, in the agent's own stop reason.
_STOPPED: dict[str, str] = {
    "max_tokens": (
        "**The reply was cut off:** the model reached its output limit (max_tokens). "
        "Ask it to continue, under the `## User` heading below."
    ),
    "refusal": (
        "**The model declined to answer** (refusal). Rephrase the prompt under the `## User` "
        "heading below to try again."
    ),
}


def _stopped_early(reply: Reply) -> str | None:
    said = _STOPPED.get(reply.stop_reason or "")
    return None if said is None else f"> [!WARNING]\n> {said}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _tokens(n: int) -> str:
    """``950``, ``45k``, ``45.5k``, ``1M``: never ``1000.0k``."""
    if n >= 999_950:  # from here on one decimal of k would read 1000.0k
        return f"{n / 1_000_000:.1f}".removesuffix(".0") + "M"
    if n >= 1000:
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    return str(n)


def context_gauge(
    used: int | None, size: int | None, document_name: str, hint_at: float = 0.8
) -> str | None:
    """The footer's context figure (``45k/200k context``), with a hint once it is nearly full."""
    if not used or not size:
        return None
    gauge = f"{_tokens(used)}/{_tokens(size)} context"
    if hint_at >= 1 or used < hint_at * size:
        return gauge
    return (
        f"{gauge} ({100 * used / size:.0f}%): nearly full, so ask for a summary and continue "
        f"from it in a new document (`agentdoc archive {document_name}` only shortens this file)"
    )


def render_footer(
    reply: Reply,
    elapsed: float,
    thinking_link: str | None,
    note: str | None = None,
    *,
    document_name: str = "",
    context_hint: float = 0.8,
) -> str:
    bits: list[str] = []
    if reply.model:
        bits.append(reply.model)
    usage = reply.usage
    if usage is not None and (usage.input_tokens or usage.output_tokens):
        # A turn that failed before the API answered reports zeros: figures it never had.
        bits.append(
            f"{_tokens(usage.input_tokens or 0)} in / {_tokens(usage.output_tokens or 0)} out"
        )
        if usage.cost_usd:
            bits.append(f"{'~' if usage.cost_estimated else ''}${usage.cost_usd:.3f}")
    bits.append(f"{elapsed:.1f} s")
    if usage is not None:
        gauge = context_gauge(
            usage.context_used, usage.context_size, html.escape(document_name), context_hint
        )
        bits.extend([gauge] if gauge else [])
    if thinking_link:
        bits.append(f"[thinking]({thinking_link})")
    if note:
        # Session bookkeeping (a rebuilt or forked session) the reader should notice.
        bits.append(html.escape(_one_line(note)))
    return "<sub>" + " · ".join(bits) + "</sub>"


def render_final(
    reply: Reply,
    *,
    elapsed: float,
    document_name: str,
    thinking_link: str | None,
    footer: bool,
    note: str | None = None,
    pending: bool = False,
    approvals: Mapping[str, str] | None = None,
    context_hint: float = 0.8,
) -> str:
    chunks = [render_body(reply, final=True, approvals=approvals)]
    problem = render_problem(reply, document_name, pending=pending)
    if problem:
        chunks.append(problem)
    if footer:
        chunks.append(
            render_footer(
                reply,
                elapsed,
                thinking_link,
                note,
                document_name=document_name,
                context_hint=context_hint,
            )
        )
    return "\n\n".join(c for c in chunks if c)
