"""A turn's own figures from a CLI that reports some of them as running totals.

A long-lived CLI (``--input-format stream-json``) counts for the whole process: each turn's
``result`` carries ``total_cost_usd`` and ``modelUsage`` summed over every turn so far, while
``usage`` is that turn's alone (observed with Claude Code 2.1.197 and 2.1.330). Claude Code
2.1.330 also counts a resumed or forked session's earlier cost in a one-shot run's total, where
2.1.197 counts only the run's own turn. Shown as they come, near-identical turns read $0.009,
$0.018, $0.027… The translator subtracts the total before the turn (our own record of the
session, or the warm process's last total), so everything downstream reads the turn's own cost
— unless the line itself shows that its totals cover this turn alone: ``modelUsage`` counts the
same tokens as the cost, so a model there with exactly the turn's ``usage`` tokens means the
total is the turn's own, whichever release wrote it.

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


def only_this_turn(turn_tokens: int, model_tokens: list[int]) -> bool:
    """Whether the ``result``'s totals count this turn alone: a model in ``modelUsage`` has
    exactly the tokens of the turn's ``usage`` (a running total would have more)."""
    return turn_tokens > 0 and turn_tokens in model_tokens


def turn_cost(
    reported: float | None, before: float, own_only: bool = False
) -> tuple[float | None, float]:
    """The turn's own cost and the running total to remember, from the CLI's reported cost.

    ``own_only``: the CLI reported this turn's cost alone, which adds to the total before.
    A failed turn reports 0 (its ``result`` has zeroed figures), which is not a new total: the
    one before stays. A total below the remembered one means the count started again.
    """
    if not reported:
        return reported, before
    if own_only:
        return reported, round(before + reported, 9)
    if reported < before:
        return reported, reported
    return round(reported - before, 9), reported
