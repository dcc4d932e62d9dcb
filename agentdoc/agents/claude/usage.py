"""A turn's own figures from a warm CLI, which reports some of them as running totals.

A long-lived CLI (``--input-format stream-json``) counts for the whole process: each turn's
``result`` carries ``total_cost_usd`` and ``modelUsage`` summed over every turn so far, while
``usage`` is that turn's alone (observed with Claude Code 2.1.197 and 2.1.330). Shown as they
come, near-identical turns read $0.009, $0.018, $0.027… The warm process remembers the last
running total and rewrites each ``result`` line so the cost in it is the turn's own; everything
downstream then reads one turn, as it does from a one-shot process.

A model name may carry the CLI's context-window tag (``claude-opus-4-8[1m]`` in ``init`` and
``modelUsage``, ``claude-opus-4-8`` in the API messages); :func:`model_name` drops it so a footer
names the model one way whichever line told it.
"""

from __future__ import annotations

import json
import re
from typing import Any

RUNNING_COST_KEY = "agentdoc_running_cost_usd"
_WINDOW_TAG = re.compile(r"\[[^\[\]]*\]$")


def model_name(name: str | None) -> str | None:
    """The model's name without the CLI's ``[1m]``-style context-window tag."""
    if not name:
        return name
    return _WINDOW_TAG.sub("", name).strip() or name


def turn_cost(reported: float | None, before: float) -> tuple[float | None, float]:
    """The turn's own cost and the running total to remember, from the CLI's running total.

    A failed turn reports 0 (its ``result`` has zeroed figures), which is not a new total: the
    one before stays. A total below the remembered one means the count started again.
    """
    if not reported:
        return reported, before
    if reported < before:
        return reported, reported
    return round(reported - before, 9), reported


def own_result(line: bytes, before: float) -> tuple[bytes, float]:
    """A warm turn's ``result`` line with its own cost, and the running total to remember.

    The CLI's running total stays in the line under :data:`RUNNING_COST_KEY`. A line that is
    not a readable ``result`` object passes through untouched.
    """
    try:
        raw: Any = json.loads(line)
    except ValueError:
        return line, before
    if not isinstance(raw, dict) or raw.get("type") != "result":
        return line, before
    reported = raw.get("total_cost_usd")
    if not isinstance(reported, int | float) or isinstance(reported, bool):
        return line, before
    own, total = turn_cost(float(reported), before)
    raw["total_cost_usd"] = own
    raw[RUNNING_COST_KEY] = reported
    return (json.dumps(raw, ensure_ascii=False) + "\n").encode("utf-8"), total
