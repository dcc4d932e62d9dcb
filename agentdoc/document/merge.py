"""Three-way merge of a reply region the user typed into while it streamed (pure).

`merge_text(base, ours, theirs)`: `base` is what we last wrote, `ours` what we want to write
now, `theirs` what is on disk. The result is our new text, exactly and completely, plus every
run of characters the user typed, carried to the same place. Characters of ours missing on disk
are put back rather than deleted, because an editor saving a copy it loaded a few writes ago
looks exactly like a deletion. Alignment uses difflib, checked by an exact alignment where
difflib's answer is suspect (repeated lines and characters), and cuts typed runs at word edges.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher
from itertools import accumulate
from typing import cast

from agentdoc.document.align import Op, exact_opcodes, tidy


def merge_text(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of a reply region, per character: our text, plus everything the user typed.

    `base` is what the user's text was made from, `ours` what we want to write now, `theirs`
    what is on disk. The region is the model's reply, so it must end up complete and exact:
    characters missing from `theirs` are restored rather than deleted. Every run the user typed
    is carried over to the same place in `ours`; where we changed that very spot too, our text
    comes first and the user's follows, so neither loses a character.
    """
    if theirs == base:
        return ours
    out: list[str] = []
    done = 0
    ops = _coarse(_opcodes(base, ours))
    for at, typed in _typed_runs(base, theirs):
        pos = _carry(ops, at, typed, base, ours)
        out += [ours[done:pos], typed]
        done = pos
    out.append(ours[done:])
    return "".join(out)


_Op = Op


def _opcodes(a: str, b: str, middle: Callable[[str, str], list[_Op]] | None = None) -> list[_Op]:
    """Opcodes turning `a` into `b`: the common ends, and `middle` (difflib) for the rest.

    The common ends are cut off first: they are all but a few characters of a streaming region,
    and every way of aligning what is left is at least quadratic in it.
    """
    head = _common_head(a, b)
    tail = _common_head(a[head:][::-1], b[head:][::-1])
    inner = (middle or _difflib)(a[head : len(a) - tail], b[head : len(b) - tail])
    ops: list[_Op] = [("equal", 0, head, 0, head)] if head else []
    ops += [(t, i1 + head, i2 + head, j1 + head, j2 + head) for t, i1, i2, j1, j2 in inner]
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops


def _difflib(a: str, b: str) -> list[_Op]:
    return [cast(_Op, op) for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()]


# Cells an exact alignment may fill (it runs in Python); beyond that difflib's answer stands.
_EXACT_LIMIT = 40_000
# Our text between two insertions that may well belong to one of them.
_SUSPECT = 8
# Matching lines this short between changed ones are aligned together with them.
_NEAR = 80


def _by_lines(a: str, b: str) -> list[_Op]:
    """difflib's alignment if it is plainly right; else an exact one, by lines if need be.

    difflib's longest-match-first is fooled by repeated text (the third of three identical
    links matched with the first one, or a fence line with another one), and then calls our text
    removed, which the merge would restore next to the user's copy of it; or it matches ``ab``
    of ours with the ``ab`` inside a word the user typed between our ``a`` and ``b``. A large
    stretch is aligned by lines first, then the lines that differ by characters.
    """
    ops = _difflib(a, b)
    if _plain(ops):
        return ops
    if len(a) * len(b) <= _EXACT_LIMIT:
        return exact_opcodes(a, b)
    lines_a, lines_b = a.splitlines(keepends=True), b.splitlines(keepends=True)
    at_a, at_b = _offsets(lines_a), _offsets(lines_b)
    if len(lines_a) * len(lines_b) <= _EXACT_LIMIT:
        by_line = _lines_aligned(lines_a, lines_b)
    else:
        matcher = SequenceMatcher(None, lines_a, lines_b, autojunk=False)
        by_line = [cast(_Op, op) for op in matcher.get_opcodes()]
    lines = [(t, at_a[i1], at_a[i2], at_b[j1], at_b[j2]) for t, i1, i2, j1, j2 in by_line]
    ops = []
    for window in _windows(lines):
        x1, x2, y1, y2 = window[0][1], window[-1][2], window[0][3], window[-1][4]
        together = len(window) > 1 and any(_removes(op) for op in window)
        if together and (x2 - x1) * (y2 - y1) <= _EXACT_LIMIT:
            ops += _shifted(exact_opcodes(a[x1:x2], b[y1:y2]), x1, y1)
        else:
            ops += [op for line_op in window for op in _by_characters(a, b, line_op)]
    return tidy(ops)


def _by_characters(a: str, b: str, op: _Op) -> list[_Op]:
    tag, x1, x2, y1, y2 = op
    if tag == "equal" or x1 == x2 or y1 == y2:
        return [op]
    exact = (x2 - x1) * (y2 - y1) <= _EXACT_LIMIT
    return _shifted((exact_opcodes if exact else _difflib)(a[x1:x2], b[y1:y2]), x1, y1)


def _lines_aligned(a: list[str], b: list[str]) -> list[_Op]:
    """Opcodes turning lines `a` into lines `b`, pairing each of our lines with the user's
    version of it (ours plus their typing) wherever one can be found.

    Which of three equal ``<!-- note -->`` lines is which decides whether the one the user typed
    into is seen as that line changed, or as a new line and one of ours removed.
    """
    n, m = len(a), len(b)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    for j in range(m - 1, -1, -1):
        score[n][j] = score[n][j + 1] - 1
    for i in range(n - 1, -1, -1):
        score[i][m] = score[i + 1][m] - 1
        for j in range(m - 1, -1, -1):
            best = max(score[i][j + 1], score[i + 1][j]) - 1
            pair = _pairing(a[i], b[j])
            if pair:
                best = max(best, pair + score[i + 1][j + 1])
            score[i][j] = best
    ops: list[_Op] = []
    i = j = 0
    while i < n or j < m:
        pair = _pairing(a[i], b[j]) if i < n and j < m else 0
        if pair and score[i][j] == pair + score[i + 1][j + 1]:
            ops.append(("equal" if pair == 3 else "replace", i, i + 1, j, j + 1))
            i, j = i + 1, j + 1
        elif i < n and score[i][j] == score[i + 1][j] - 1:
            ops.append(("delete", i, i + 1, j, j))
            i += 1
        else:
            ops.append(("insert", i, i, j, j + 1))
            j += 1
    return tidy(ops)


def _pairing(ours: str, theirs: str) -> int:
    """3 for the same line, 2 for our line with the user's typing in it, else 0."""
    if ours == theirs:
        return 3
    return 2 if len(ours) < len(theirs) and _is_subsequence(ours, theirs) else 0


def _is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(char in it for char in small)


def _windows(ops: list[_Op]) -> list[list[_Op]]:
    """Group changed lines with the changed lines near them (a short match apart).

    A user's line and our line it was made from can end up on either side of a repeated line
    (two ``<div>`` lines): aligned apart, ours would count as removed and be restored.
    """
    windows: list[list[_Op]] = []
    for op in ops:
        near = len(windows) >= 2 and len(windows[-1]) == 1 and windows[-1][0][0] == "equal"
        if near and op[0] != "equal" and windows[-2][-1][0] != "equal":
            gap = windows.pop()[0]
            if gap[2] - gap[1] <= _NEAR:
                windows[-1] += [gap, op]
                continue
            windows.append([gap])
        windows.append([op])
    return windows


def _shifted(ops: list[_Op], i0: int, j0: int) -> list[_Op]:
    return [(t, i1 + i0, i2 + i0, j1 + j0, j2 + j0) for t, i1, i2, j1, j2 in ops]


def _plain(ops: list[_Op]) -> bool:
    """Only insertions, and none of our text short enough between two of them to be suspect."""
    if any(_removes(op) for op in ops):
        return False
    return not any(
        op[0] == "equal" and op[2] - op[1] <= _SUSPECT and 0 < k < len(ops) - 1
        for k, op in enumerate(ops)
    )


def _offsets(lines: list[str]) -> list[int]:
    return [0, *accumulate(len(line) for line in lines)]


def _coarse(ops: list[_Op], *, between_removals: bool = False) -> list[_Op]:
    """Fold matches no longer than the changes on both sides into one replaced span.

    When a retried stream replaces our text, difflib still matches a letter here and a word
    there between the old and the new text; carrying the user's typing along those would drop it
    in the middle of unrelated new text (even between an escape and the line it escapes).
    Likewise a word the user typed over one of ours shares a letter or two with it, and the
    typing should stay in one piece. For the user's side (`between_removals`) only matches
    between two removed spans are folded: a match between two insertions is the user's typing
    around our text, and folding it would repeat our text.
    """
    ops = list(ops)
    k = 1
    while k < len(ops) - 1:
        before, same, after = ops[k - 1], ops[k], ops[k + 1]
        size = same[2] - same[1]
        small = same[0] == "equal" and size <= min(_size(before), _size(after))
        if small and (not between_removals or (_removes(before) and _removes(after))):
            ops[k - 1 : k + 2] = [("replace", before[1], after[2], before[3], after[4])]
            k = max(1, k - 2)
        else:
            k += 1
    return ops


def _removes(op: _Op) -> bool:
    return op[0] in ("delete", "replace")


def _size(op: _Op) -> int:
    return max(op[2] - op[1], op[4] - op[3])


def _common_head(a: str, b: str) -> int:
    """Length of the common prefix, by bisection so the comparing happens in C."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


# --- what the user typed -----------------------------------------------------------------------


def _typed_runs(base: str, theirs: str) -> list[tuple[int, str]]:
    """(offset in `base`, text) of every run `theirs` adds to `base`, in order."""
    ops = _coarse(_opcodes(base, theirs, _by_lines), between_removals=True)
    ops = _at_word_edges(ops, theirs)
    runs = []
    for k, (tag, _i1, i2, j1, j2) in enumerate(ops):
        if tag == "insert" and j2 > j1:
            # It may slide over the match that follows, but never past the next run.
            limit = ops[k + 1][2] if k + 1 < len(ops) and ops[k + 1][0] == "equal" else i2
            runs.append(_slide(base, i2, theirs[j1:j2], limit))
        elif tag == "replace":
            # The replaced span is restored, and what the user typed over it follows it.
            runs.append((i2, theirs[j1:j2]))
    return runs


def _at_word_edges(ops: list[_Op], theirs: str) -> list[_Op]:
    """Re-cut two typed runs around a short match so that each reads as typed.

    difflib matches a letter of ours with the first equal letter it finds, which may sit inside
    the user's word (``xfy`` typed before ``f``: is the ``f`` of ours the first or the second
    one?). It does not change the text here, but it does where we change that letter (a retried
    stream replaces it): so pick the cut that splits words least, and of those the last.
    """
    ops = list(ops)
    for k in range(1, len(ops) - 1):
        first, same, second = ops[k - 1], ops[k], ops[k + 1]
        if (first[0], same[0], second[0]) == ("insert", "equal", "insert"):
            ops[k - 1 : k + 2] = _best_cut(first, same, second, theirs)
    return ops


def _best_cut(first: _Op, same: _Op, second: _Op, theirs: str) -> list[_Op]:
    lo, hi, size = first[3], second[4], same[4] - same[3]
    matched = theirs[same[3] : same[4]]
    cuts = [j for j in range(lo, hi - size + 1) if theirs.startswith(matched, j)]
    best = min(cuts, key=lambda j: (_splits(theirs, lo, j) + _splits(theirs, j + size, hi), -j))
    return [
        ("insert", first[1], first[2], lo, best),
        ("equal", same[1], same[2], best, best + size),
        ("insert", second[1], second[2], best + size, hi),
    ]


def _splits(text: str, start: int, end: int) -> int:
    """How badly a typed run text[start:end] cuts into what is around it at its two ends.

    Cutting between two letters or digits (inside a word) counts three, between two other
    characters that are not spaces (``x`` | ``)``) one, next to a space or line break nothing.
    """
    if start == end:
        return 0
    return sum(_cut_cost(text, at) for at in (start, end))


def _cut_cost(text: str, at: int) -> int:
    if not 0 < at < len(text):
        return 0
    left, right = text[at - 1], text[at]
    if left.isspace() or right.isspace():
        return 0
    return 3 if left.isalnum() and right.isalnum() else 1


def _slide(base: str, at: int, run: str, limit: int) -> tuple[int, str]:
    """The same insertion moved as late as it can go.

    Typing ``x⏎`` before a line break gives the same text as typing ``⏎x`` after it. Where we
    also changed that spot the two put the line break in different places; a typed run most
    often ends with its separator (a space, Enter), so that is the reading we pick.
    """
    while at < limit and run[0] == base[at]:
        run, at = run[1:] + base[at], at + 1
    return at, run


def _carry(ops: list[_Op], at: int, typed: str, base: str, ours: str) -> int:
    """Where offset `at` of the base lands in our new text: after our own change at that spot.

    Except for a line the user typed where we only prefix the line that follows it (an escape
    that stops a ``## User`` line from being a heading): the prefix stays on its line.
    """
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i1 <= at < i2:
            return j1 + at - i1
        if tag != "equal" and i1 <= at <= i2:
            prefix = tag == "insert" and at < len(base) and (at == 0 or base[at - 1] == "\n")
            if prefix and typed.endswith("\n") and "\n" not in ours[j1:j2]:
                return j1
            return j2
    return len(ours)
