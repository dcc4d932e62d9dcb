"""A turn's own figures from a CLI that reports some of them as running totals.

A long-lived CLI (``--input-format stream-json``) counts for the whole process: each turn's
``result`` carries ``total_cost_usd`` and ``modelUsage`` summed over every turn so far, while
``usage`` is that turn's alone (observed with Claude Code 2.1.197 and 2.1.330). Claude Code
2.1.330 also counts a resumed or forked session's earlier cost in a one-shot run's total. Shown
as they come, near-identical turns read $0.009, $0.018, $0.027… The translator subtracts the
total before the turn (our own record of the session, or the warm process's last total), so
everything downstream reads the turn's own cost.

A model name may carry the CLI's context-window tag (``claude-opus-4-8[1m]`` in ``init`` and
``modelUsage``, ``claude-opus-4-8`` in the API messages); :func:`model_name` drops it so a footer
names the model one way whichever line told it.
"""

from __future__ import annotations

import re

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
