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

A fresh process (every one-shot run, a warm CLI's first turn) may start its totals from what
the session file already cost: Claude Code 2.1.332 counts a resumed session's earlier messages,
and a warm fork counts the whole file, turns `undo` took back or a cancel cut short included.
No record of ours can say which, so there the turn's own cost is its share of the model's
reported cost by the tokens it spent (``modelUsage`` counts the restored tokens with the cost).
The share weighs token kinds as every Claude model is priced — output 5×, a cache write 1.25×,
a cache read 0.1× an input token — so it is exact while those ratios hold. A process that has
already reported a total is its own baseline: its next turn costs the difference.

A CLI stopped by SIGINT may exit before it prints its ``result`` (Claude Code's print mode
starts its shutdown as it aborts the request, and under load the exit wins), and a crash or a
kill prints none: then the CLI has told no cost at all, though the API was paid for the prompt
it read and the words it streamed. Such a turn's cost is estimated from the tokens the stream
showed, at the price the same model's cost came to in the last ``result`` this process read
(:class:`Prices`), and said to be an estimate.

A model name may carry the CLI's context-window tag (``claude-opus-4-8[1m]`` in ``init`` and
``modelUsage``, ``claude-opus-4-8`` in the API messages); :func:`model_name` drops it so a footer
names the model one way whichever line told it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

_WINDOW_TAG = re.compile(r"\[[^\[\]]*\]$")


def model_name(name: str | None) -> str | None:
    """The model's name without the CLI's ``[1m]``-style context-window tag."""
    if not name:
        return name
    return _WINDOW_TAG.sub("", name).strip() or name


# What each kind of token costs, in input tokens (Anthropic's price ratios for every model).
_WEIGHTS = {
    "input_tokens": 1.0,
    "output_tokens": 5.0,
    "cache_creation_input_tokens": 1.25,
    "cache_read_input_tokens": 0.1,
}
_MODEL_KEYS = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_creation_input_tokens": "cacheCreationInputTokens",
    "cache_read_input_tokens": "cacheReadInputTokens",
}


def token_weight(usage: dict[str, object], model: bool = False) -> float:
    """``usage``'s tokens in input-token equivalents (``model``: a ``modelUsage`` entry)."""
    total = 0.0
    for key, weight in _WEIGHTS.items():
        value = usage.get(_MODEL_KEYS[key] if model else key)
        total += weight * value if isinstance(value, int) else 0.0
    return total


OUTPUT_WEIGHT = _WEIGHTS["output_tokens"]


def prompt_weight(usage: dict[str, object]) -> float:
    """A streamed message's prompt (its ``message_start`` usage) in input-token equivalents."""
    return token_weight({key: value for key, value in usage.items() if key != "output_tokens"})


def model_prices(costs: Mapping[str, tuple[float, float]]) -> dict[str, float]:
    """Each model's price per input-token equivalent, from its (weighed tokens, reported cost)
    in a ``result``'s ``modelUsage`` (what it counted, restored turns included, is what it
    priced)."""
    return {
        model: cost / weight
        for name, (weight, cost) in costs.items()
        if (model := model_name(name)) and cost > 0 and weight > 0
    }


class Prices:
    """What each model cost per input-token equivalent, by the last ``result`` that priced it:
    the price of a turn whose CLI stopped without a ``result``. Shared by the turns of one
    process, on their own threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_model: dict[str, float] = {}

    def learn(self, prices: Mapping[str, float]) -> None:
        with self._lock:
            self._by_model.update(prices)

    def of(self, model: str | None) -> float | None:
        with self._lock:
            return None if model is None else self._by_model.get(model)


def estimate(weight: float, price: float | None) -> float | None:
    """An unreported turn's cost: its weighed tokens at the model's last known price."""
    return round(weight * price, 6) if price and weight > 0 else None


def cost_share(own_weight: float, models: list[tuple[float, float]]) -> float | None:
    """The turn's own cost as its share of the one model's reported (weight, cost), or None
    when that cannot tell it: no tokens of its own (a cancelled turn reports none), or several
    models (which one spent the turn's tokens is not told)."""
    if own_weight <= 0 or len(models) != 1:
        return None
    weight, cost = models[0]
    if weight < own_weight or cost <= 0:
        return None
    return round(cost * own_weight / weight, 6)


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
