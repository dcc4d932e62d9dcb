"""An exact alignment of two sequences, for where difflib's answer is suspect (pure).

difflib matches the longest blocks first, which goes wrong on repeated lines and characters;
this finds the alignment with the most matches and, among those, the fewest runs of inserted
items (what a person typing produces). Quadratic, so callers use it on bounded windows.
"""

from __future__ import annotations

from collections.abc import Sequence

Op = tuple[str, int, int, int, int]  # difflib's opcode shape: (tag, i1, i2, j1, j2)


def exact_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Op]:
    """Opcodes turning `a` into `b` (characters or lines): most matches first, then fewest
    runs of inserted items.

    ``free[i][j]`` and ``typing[i][j]`` are the best scores for ``a[i:]`` against ``b[j:]``
    when ``b[j - 1]`` was matched or was inserted (then inserting ``b[j]`` extends a run rather
    than opening one). A match is worth more than any number of runs.
    """
    n, m, worth = len(a), len(b), len(b) + 2
    free = [[0] * (m + 1) for _ in range(n + 1)]
    typing = [[0] * (m + 1) for _ in range(n + 1)]
    for j in range(m - 1, -1, -1):
        typing[n][j], free[n][j] = 0, -1
    for i in range(n - 1, -1, -1):
        row_free, row_typing, next_free, next_typing = (
            free[i],
            typing[i],
            free[i + 1],
            typing[i + 1],
        )
        char = a[i]
        for j in range(m - 1, -1, -1):
            go_on = row_typing[j + 1]
            skip_free, skip_typing = next_free[j], next_typing[j]
            best_free = go_on - 1 if go_on - 1 > skip_free else skip_free
            best_typing = go_on if go_on > skip_typing else skip_typing
            if char == b[j]:
                match = worth + next_free[j + 1]
                best_free = match if match > best_free else best_free
                best_typing = match if match > best_typing else best_typing
            row_free[j], row_typing[j] = best_free, best_typing
    return tidy(_walk(a, b, (free, typing), worth))


def _walk(
    a: Sequence[str], b: Sequence[str], tables: tuple[list[list[int]], ...], worth: int
) -> list[Op]:
    """Follow the best scores of `exact_opcodes` from the start.

    Of equally good steps a match comes first, then a removal: a removal and the insertion that
    replaces it then sit side by side (one changed line, not a line added here and another
    removed after the next equal line), where a finer alignment can see what they share.
    """
    free, typing = tables
    ops: list[Op] = []
    i = j = 0
    table = free
    while i < len(a) or j < len(b):
        best = table[i][j]
        if i < len(a) and j < len(b) and a[i] == b[j] and best == worth + free[i + 1][j + 1]:
            ops.append(("equal", i, i + 1, j, j + 1))
            i, j, table = i + 1, j + 1, free
        elif i < len(a) and best == table[i + 1][j]:
            ops.append(("delete", i, i + 1, j, j))
            i += 1
        else:
            ops.append(("insert", i, i, j, j + 1))
            j, table = j + 1, typing
    return ops


def tidy(ops: list[Op]) -> list[Op]:
    """Join neighbouring opcodes so that matches and changes alternate, as difflib's do."""
    out: list[Op] = []
    for op in ops:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if out and (out[-1][0] == "equal") == (op[0] == "equal"):
            op = _joined(out.pop(), op)
        out.append(op)
    return out


def _joined(first: Op, second: Op) -> Op:
    i1, i2, j1, j2 = first[1], second[2], first[3], second[4]
    if first[0] == "equal":
        return ("equal", i1, i2, j1, j2)
    removes, adds = i2 > i1, j2 > j1
    return ("replace" if removes and adds else "delete" if removes else "insert", i1, i2, j1, j2)
