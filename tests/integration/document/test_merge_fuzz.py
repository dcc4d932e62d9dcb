"""No lost keystroke: a simulated user edits the document while a reply streams into it.

The writer does what `TurnRunner` does: on every flush it takes the file as it is now and
writes ``splice.fill_region(current, nonce, render(text so far), last_body, earlier)``; at the
end ``splice.close_region(...)`` (plus the frontmatter session key, as the runner does).
`earlier` is every body written before `last_body`: with it a stale copy is merged against the
write it was made from. Between writer steps a simulated user edits the file through an editor
buffer and saves it:

* inserts unique marker words anywhere in the body (preamble, prompt, inside the reply region,
  on the marker lines, right after the region, at the end of the file), inside words or as whole
  new lines, never into a turn heading (that would change the structure on purpose);
* deletes original words of the document (never the reply, never their own markers);
* types a new ``## User`` block below the reply, or adds a key line to the frontmatter.

Meanwhile the reply streams in random-sized pieces (markdown, CJK, emoji, fences, HTML, lines
that would be turn headings if not escaped) and is sometimes retried: a partial attempt is
rolled back and replaced by the real reply.

Save strategies: ``normal`` (the editor reloads after every write of ours, so the user edits the
latest text), ``stale`` (the editor often does not reload: the user saves edits made on a copy
loaded a few writer steps ago, whose reply region is older and shorter) and ``mixed``.

Which stale saves are which:

* the stale copy still holds the region markers (it was loaded after the region was opened):
  the reply must be restored in full and every word the user typed kept;
* the stale copy predates the region (loaded before the reply started): the saved file has no
  markers, and ``fill_region``/``close_region`` return None, exactly as when the user deleted
  the reply; telling the two apart is the runner's job (`agentdoc.reattach`). Those trials
  assert exactly that and stop.

Markers are bracketed by ``§``, which the reply generator never produces, so a marker can never
coincide with model text. Without that, a word typed next to identical text is ambiguous (typing
``ab`` before ``ab`` gives the same file as typing it after), and no merge can tell where it
belongs. Their inner letters do come from the reply's alphabet, to exercise stray matches.

Invariants checked after every write and at the end:

1. every marker word the user typed is in the file exactly once and in one piece, and all of
   them keep the order they had in the user's last save (the space or line break typed with a
   marker is accounted for by count: whose line break is whose can be ambiguous);
2. with the user's typing taken out, the region holds exactly the rendered reply (while
   streaming) and the ``## Assistant`` block exactly the final reply (after close);
3. the turns parse as user, assistant, user… with the reply right after its prompt;
4. no marker comment of the turn is left after close.

A failure names the seed and the strategy, and lists every step of the trial;
``run_trial(seed, strategy)`` replays it.
"""

from __future__ import annotations

import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentdoc.document import frontmatter, splice
from agentdoc.document import parser as document
from agentdoc.document.frontmatter_edit import set_meta
from agentdoc.document.merge import merge_text
from agentdoc.document.seal import seal_reply

SESSION = "1c0e5d6a-2b3c-4d5e-8f90-0123456789ab"
BRACKET = "§"
TRIALS = 800
# Thousands of trials of pure Python: a minute of CPU here, and on a 2-core machine running
# another suite beside this one, five. The suite's 300 s guard is for a test that hangs.
pytestmark = pytest.mark.timeout(900)
HYPOTHESIS_TRIALS = 300
STRATEGIES = ("normal", "stale", "mixed")
# Chance that the editor reloads the file after one of our writes.
RELOAD = {"normal": 1.0, "stale": 0.25, "mixed": 0.6}
# Chance that the editor still holds the file from before the reply when the user first saves.
PREDATES = {"normal": 0.0, "stale": 0.15, "mixed": 0.0}

# --- the reply --------------------------------------------------------------------------------

_WORDS = [
    "the", "borrow", "fails", "because", "x", "a", "é", "naïve", "漢字", "かな", "한국어", "🙂",
    "👍🏽", "👨‍👩‍👧", "**bold**", "`code`", "_it_", "[link](https://example.com)", "\\", "<",
    ">", "&amp;", "|", "#", "-", "*", "--", "User", "Assistant", "end", "reply", "-->", "<!--",
]  # fmt: skip
_LINES = [
    "## User", "## Assistant", "## User ##", "## Userland", "   ## User", "### Notes", "---",
    "```", "```py", "~~~", "````", "> quote ## User", "> ## User", "- item", "- ## User",
    "1. step", "<div>", "</div>", "<!-- note -->", "<!--", "-->", "    ## User (indented)",
    "<!-- agentdoc:end 00000000 -->", "<!-- agentdoc:reply 00000000 -->", "User", "===",
    "# Title", "", "",
]  # fmt: skip


def make_reply(rng: random.Random) -> str:
    lines: list[str] = []
    for _ in range(rng.randint(0, 14)):
        if rng.random() < 0.3:
            lines.append(rng.choice(_LINES))
        else:
            lines.append(" ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 8))))
    text = "\n".join(lines)
    return text + "\n" if text and rng.random() < 0.3 else text


def render(text: str) -> str:
    """What the runner renders for a text part: sealed, so it cannot forge turns."""
    return seal_reply(text) if text.strip() else ""


def snapshots(rng: random.Random, reply: str) -> list[str]:
    """The successive texts the writer flushes; sometimes an abandoned attempt comes first."""
    texts: list[str] = []
    if rng.random() < 0.15:
        # A retried stream: partial text that the reply builder later rolls back.
        abandoned = make_reply(rng)
        texts += _prefixes(rng, abandoned)
        texts.append("")
    return texts + _prefixes(rng, reply)


def _prefixes(rng: random.Random, text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        pos = min(len(text), pos + rng.randint(1, 30))
        out.append(text[:pos])
    return out


def final_body(rng: random.Random, reply: str) -> str:
    chunks = [render(reply)]
    if rng.random() < 0.5:
        chunks.append("<sub>sonnet · 1.2k in / 350 out · $0.012 · 4.2 s</sub>")
    return "\n\n".join(c for c in chunks if c)


# --- the document -----------------------------------------------------------------------------


def make_document(rng: random.Random, nl: str) -> str:
    words = [f"W{i:02d}" for i in range(12)]
    preamble = " ".join(words[:6])
    prompt = " ".join(words[6:])
    head = "---\ntitle: Fuzz\nagentdoc: {}\n---\n\n# Fuzz doc\n\n"
    text = f"{head}{preamble}\n\n## User\n\n{prompt}\n"
    if rng.random() < 0.2:
        text = text.rstrip("\n")
    return text.replace("\n", nl)


def region_text(body: str, nl: str) -> str:
    body = splice.with_newlines(body, nl)
    return body if not body or body.endswith(nl) else body + nl


# --- the simulated user -----------------------------------------------------------------------


@dataclass(frozen=True)
class Typed:
    token: str  # the unique marker word
    text: str  # exactly what was inserted: the marker and its padding, or a whole block
    pad: str = ""  # the space or line break typed with the marker


@dataclass
class Sim:
    rng: random.Random
    nl: str
    nonce: str
    disk: str
    buffer: str
    typed: list[Typed] = field(default_factory=list)
    saved_order: list[str] = field(default_factory=list)
    user_block: bool = False
    stale_saves: int = 0  # saves of a copy that missed some of our writes but has the region
    log: list[str] = field(default_factory=list)

    def token(self) -> str:
        inner = "".join(self.rng.choice("abcdeilnorstu0123") for _ in range(self.rng.randint(1, 3)))
        return f"{BRACKET}{len(self.typed)}:{inner}{BRACKET}"


def _markers(text: str, nonce: str) -> list[tuple[int, int]]:
    region = splice.find_region(text, nonce)
    if region is None:
        return []
    start = len(splice.START.format(nonce=nonce))
    return [(region.start, region.start + start), (region.content_end, region.marker_end)]


# Lines that are (or look like) turn headings; escaped ones are fair game.
_TURN_LINE = re.compile(r"^ {0,3}##[ \t]+(?:User|Assistant)[ \t#]*\r?$", re.MULTILINE)


def _forbidden(sim: Sim, text: str) -> list[tuple[int, int]]:
    """Spans the user does not type into: our markers, their own markers, turn headings.

    Typing into a heading line would change the turn structure on purpose; that is the user's
    business, and the structure check could no longer tell it from a merge bug.
    """
    spans = [(a + 1, b) for a, b in _markers(text, sim.nonce)]
    for typed in sim.typed:
        for piece in (typed.token, typed.text):
            at = text.find(piece)
            if at >= 0:
                spans.append((at + 1, at + len(piece)))
    spans += [(m.start(), m.end() + 1) for m in _TURN_LINE.finditer(text)]
    return spans


def _allowed(text: str, pos: int, spans: list[tuple[int, int]]) -> bool:
    if 0 < pos < len(text) and text[pos - 1] == "\r" and text[pos] == "\n":
        return False
    return not any(a <= pos < b for a, b in spans)


def _position(sim: Sim, text: str) -> tuple[int, str]:
    """An insertion point, biased towards the places where merges go wrong, and its kind."""
    body = frontmatter.split(text).body_offset
    region = splice.find_region(text, sim.nonce)
    spans = _forbidden(sim, text)
    choices: list[tuple[str, list[int]]] = [("anywhere", list(range(body, len(text) + 1)))]
    if region is not None:
        start_end = region.start + len(splice.START.format(nonce=sim.nonce))
        inside = list(range(region.content_start, region.content_end + 1))
        choices += [
            ("region", inside),
            ("region", inside),
            ("region-end", [region.content_end]),
            ("region-start", [region.content_start]),
            ("after-start", [start_end]),
            ("after-end", [region.marker_end]),
        ]
    choices.append(("eof", [len(text)]))
    kind, candidates = sim.rng.choice(choices)
    good = [p for p in candidates if _allowed(text, p, spans)]
    if not good:
        good = [p for p in range(body, len(text) + 1) if _allowed(text, p, spans)]
        kind = "anywhere"
    return sim.rng.choice(good), kind


def _insert_marker(sim: Sim, text: str) -> str:
    pos, kind = _position(sim, text)
    token = sim.token()
    if (pos == 0 or text[pos - 1] == "\n") and sim.rng.random() < 0.4:
        pad = sim.nl  # a whole new line
    else:
        pad = sim.rng.choice(["", " "])  # a word typed into a line
    typed = Typed(token, token + pad, pad)
    sim.typed.append(typed)
    sim.log.append(f"insert {typed.text!r} at {pos} ({kind})")
    return text[:pos] + typed.text + text[pos:]


def _delete_word(sim: Sim, text: str) -> str:
    spans = _forbidden(sim, text)
    region = splice.find_region(text, sim.nonce)
    found = []
    for match in re.finditer(r"W\d\d", text):
        inside = region is not None and region.start <= match.start() < region.end
        if not inside and not any(a < match.end() and match.start() < b for a, b in spans):
            found.append(match)
    if not found:
        return text
    match = sim.rng.choice(found)
    sim.log.append(f"delete {match.group()!r} at {match.start()}")
    return text[: match.start()] + text[match.end() :]


def _user_block(sim: Sim, text: str) -> str:
    if sim.user_block:
        return _insert_marker(sim, text)
    sim.user_block = True
    nl, token = sim.nl, sim.token()
    typed = Typed(token, f"{nl}## User{nl}{nl}{token}{nl}")
    sim.typed.append(typed)
    sim.log.append(f"user block {token} at eof")
    return text + typed.text


def _frontmatter_key(sim: Sim, text: str) -> str:
    body = frontmatter.split(text).body_offset
    at = text.rfind("---", 0, body)
    token = sim.token()
    typed = Typed(token, f"x{len(sim.typed)}: {token}{sim.nl}")
    sim.typed.append(typed)
    sim.log.append(f"frontmatter {typed.text!r}")
    return text[:at] + typed.text + text[at:]


EDITS: list[tuple[float, Callable[[Sim, str], str]]] = [
    (0.62, _insert_marker),
    (0.2, _delete_word),
    (0.1, _user_block),
    (0.08, _frontmatter_key),
]


def user_saves(sim: Sim) -> None:
    text = sim.buffer
    for _ in range(sim.rng.randint(1, 3)):
        edit = sim.rng.choices([e for _, e in EDITS], [w for w, _ in EDITS])[0]
        text = edit(sim, text)
    stale = sim.buffer != sim.disk
    if stale and splice.find_region(sim.buffer, sim.nonce) is not None:
        sim.stale_saves += 1
    sim.log.append("save" + (" (stale)" if stale else ""))
    sim.buffer = sim.disk = text
    sim.saved_order = order_of(sim, text)


def order_of(sim: Sim, text: str) -> list[str]:
    return sorted((t.token for t in sim.typed), key=text.find)


# --- the invariants ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Cut:
    at: int  # where the cut text was, as an offset into the text after the cuts
    size: int  # how much was cut there


def cut_typed(sim: Sim, text: str) -> tuple[str, list[Cut]]:
    """`text` without the user's markers (and their padding where it is still right after them).

    Used to look at the turn structure the merge left. Padding is ambiguous: ``x⏎`` typed before
    a line break reads the same as ``⏎x`` typed after it, so a merge may keep a marker's line
    break on its other side, and this cut may take a neighbouring one instead; so the reply
    itself is compared with the padding accounted for by count (`assert_reply_plus`).
    """
    spots = []
    for typed in sim.typed:
        assert text.count(typed.token) == 1, f"marker {typed.token!r} lost, split or duplicated"
        at = text.find(typed.token)
        whole = bool(typed.pad) and text.startswith(typed.text, at)
        spots.append((at, len(typed.text) if whole else len(typed.token)))
    out: list[str] = []
    cuts: list[Cut] = []
    done = removed = 0
    for at, size in sorted(spots):
        out.append(text[done:at])
        cuts.append(Cut(at - removed, size))
        removed += size
        done = at + size
    out.append(text[done:])
    return "".join(out), cuts


def drop_markers(sim: Sim, text: str) -> str:
    """`text` without the marker words (their padding stays)."""
    for typed in sim.typed:
        text = text.replace(typed.token, "")
    return text


def uncut(cuts: list[Cut], pos: int) -> int:
    """The offset in the original text of offset `pos` of the cut text (cuts at `pos` after)."""
    return pos + sum(c.size for c in cuts if c.at < pos)


def padding_in(sim: Sim, text: str, start: int, end: int) -> str:
    return "".join(t.pad for t in sim.typed if start <= text.find(t.token) < end)


def assert_reply_plus(got: str, reply: str, extra: str) -> None:
    """`got` is exactly `reply` with the characters of `extra` added somewhere."""
    assert len(got) == len(reply) + len(extra), (got, reply, extra)
    assert Counter(got) - Counter(reply) == Counter(extra), (got, reply, extra)
    it = iter(got)
    assert all(ch in it for ch in reply), (got, reply, extra)


def check_streaming(sim: Sim, body: str) -> None:
    region = splice.find_region(sim.disk, sim.nonce)
    assert region is not None
    raw = sim.disk[region.content_start : region.content_end]
    content = drop_markers(sim, raw)
    extra = padding_in(sim, sim.disk, region.content_start, region.content_end)
    assert_reply_plus(content, region_text(body, sim.nl), extra)


def check_final(sim: Sim, final: str, body: str, lead: bool) -> None:
    assert sim.nonce not in final, "a marker comment of the turn was left behind"
    assert order_of(sim, final) == sim.saved_order, "the user's words changed order"
    clean, cuts = cut_typed(sim, final)
    turns = document.parse(clean).turns
    roles = [t.role for t in turns]
    assert roles[:2] == ["user", "assistant"], roles
    assert set(roles[2:]) == {"user"}, roles
    start, end = uncut(cuts, turns[1].content_start), uncut(cuts, turns[1].end)
    content = drop_markers(sim, final[start:end])
    nl = sim.nl
    # Close keeps the start marker's line when the user typed on it.
    extra = padding_in(sim, final, start, end) + (nl if lead else "")
    assert_reply_plus(content, nl + region_text(body.rstrip("\n"), nl) + nl, extra)


def start_line_typed(sim: Sim, text: str) -> bool:
    """Whether the user typed on the start marker's line (close keeps that line)."""
    region = splice.find_region(text, sim.nonce)
    assert region is not None
    head = region.start + len(splice.START.format(nonce=sim.nonce))
    return text[head : region.content_start] not in ("", "\n", "\r\n")


# --- one trial --------------------------------------------------------------------------------


def new_sim(seed: int, strategy: str) -> tuple[Sim, str, str]:
    rng = random.Random(seed)
    nl = "\r\n" if rng.random() < 0.25 else "\n"
    text = make_document(rng, nl)
    nonce = f"{rng.getrandbits(32):08x}"
    doc = document.parse(text)
    last = doc.last_user()
    assert last is not None
    opened = splice.open_reply(text, last.end, nonce)
    sim = Sim(rng, nl, nonce, opened, opened)
    if rng.random() < PREDATES[strategy]:
        sim.buffer = text  # the editor still shows the file as it was before the reply began
    reply = make_reply(rng)
    return sim, reply, final_body(rng, reply)


def run_trial(seed: int, strategy: str, *, history: bool = True) -> tuple[str, int]:
    """One simulated turn: "closed", or "gone" (the region), and how many stale copies were saved.

    An AssertionError says how it broke. Without `history` the writer passes only its last
    write, never the earlier ones.
    """
    sim, reply, final = new_sim(seed, strategy)
    try:
        return _run(sim, strategy, reply, final, history), sim.stale_saves
    except AssertionError as exc:
        steps = "\n  ".join(sim.log)
        raise AssertionError(
            f"seed={seed} strategy={strategy} history={history}: {exc}\n  {steps}"
        ) from exc


def _run(sim: Sim, strategy: str, reply: str, final: str, history: bool) -> str:
    written = [""]
    for text in snapshots(sim.rng, reply):
        if sim.rng.random() < 0.5:
            user_saves(sim)
        body = render(text)
        if body == written[-1]:
            continue
        earlier = written[:-1] if history else []
        new = splice.fill_region(sim.disk, sim.nonce, body, written[-1], earlier)
        if new is None:
            return _gone(sim)
        sim.disk = new
        written.append(body)
        sim.log.append(f"flush {len(body)} chars")
        check_streaming(sim, body)
        if sim.rng.random() < RELOAD[strategy]:
            sim.buffer = sim.disk
    if sim.rng.random() < 0.5:
        user_saves(sim)
    if splice.find_region(sim.disk, sim.nonce) is None:
        return _gone(sim)
    lead = start_line_typed(sim, sim.disk)
    earlier = written[:-1] if history else []
    closed = splice.close_region(sim.disk, sim.nonce, final, written[-1], earlier)
    assert closed is not None
    if sim.rng.random() < 0.5:
        closed = set_meta(closed, {"session": SESSION})
    check_final(sim, closed, final, lead)
    return "closed"


def _gone(sim: Sim) -> str:
    """The user saved a copy from before the reply: splice says the region is gone."""
    assert splice.find_region(sim.disk, sim.nonce) is None
    assert splice.fill_region(sim.disk, sim.nonce, "x", "") is None
    assert splice.close_region(sim.disk, sim.nonce, "x", "") is None
    assert sim.nonce not in sim.disk, "a stale save without the region still has a marker"
    return "gone"


# --- the merge alone --------------------------------------------------------------------------

# A small alphabet, so that the user's words and our text share letters all the time.
_CHARS = "ab1 \n`#\\-é漢🙂"
_texts = st.text(alphabet=_CHARS, max_size=40)


@st.composite
def merges(draw: st.DrawFn) -> tuple[str, str, str, list[str]]:
    """(base, ours, theirs, the words the user typed into base to make theirs).

    The words share no letter with our text, only their padding (a space or a line break) can
    match ours: then which one is the user's is ambiguous, and is accounted for by count. Words
    sharing letters with the reply are the simulated user's business, above.
    """
    base = draw(_texts)
    change = draw(st.sampled_from(["append", "replace", "escape", "same"]))
    if change == "append":
        ours = base + draw(_texts)
    elif change == "replace":
        ours = draw(_texts)  # a retried stream: our text replaced by other text
    elif change == "escape":
        starts = [i for i in range(len(base) + 1) if i == 0 or base[i - 1] == "\n"]
        at = draw(st.sampled_from(starts))
        ours = base[:at] + "\\" + base[at:]
    else:
        ours = base
    spots = draw(st.lists(st.integers(0, len(base)), max_size=5))
    words = []
    theirs = base
    for n, at in enumerate(sorted(spots, reverse=True)):
        inner = draw(st.text(alphabet="xyz", min_size=1, max_size=4))
        pad = draw(st.sampled_from(["", " ", "\n"]))
        words.append(f"{BRACKET}{'pqrst'[n]}{inner}{BRACKET}{pad}")
        theirs = theirs[:at] + words[-1] + theirs[at:]
    return base, ours, theirs, words


@settings(max_examples=1500, deadline=None, derandomize=True)
@given(case=merges())
def test_merge_keeps_our_text_and_every_typed_word(case: tuple[str, str, str, list[str]]) -> None:
    base, ours, theirs, words = case
    merged = merge_text(base, ours, theirs)
    tokens = [w.rstrip(" \n") for w in words]
    assert all(merged.count(t) == 1 for t in tokens), merged
    assert sorted(tokens, key=merged.find) == sorted(tokens, key=theirs.find)
    without = merged
    for token in tokens:
        without = without.replace(token, "")
    assert_reply_plus(
        without, ours, "".join(w[len(t) :] for w, t in zip(words, tokens, strict=True))
    )


# --- the tests --------------------------------------------------------------------------------


def drive(seeds: range, strategies: tuple[str, ...], *, history: bool = True) -> Counter[str]:
    counts: Counter[str] = Counter()
    started = time.monotonic()
    for seed in seeds:
        strategy = strategies[seed % len(strategies)]
        outcome, stale = run_trial(seed, strategy, history=history)
        counts[f"{strategy} {outcome}"] += 1
        counts["stale saves with the region"] += stale
    elapsed = time.monotonic() - started
    print(f"{len(seeds)} trials in {elapsed:.1f} s: {dict(sorted(counts.items()))}")
    return counts


def test_seeded_trials_keep_every_keystroke() -> None:
    counts = drive(range(TRIALS), STRATEGIES)
    # Both kinds of stale save must actually have happened, or the test proves less than it says.
    assert counts["stale saves with the region"] > TRIALS // 3
    assert counts["stale gone"] > 0
    assert counts["normal gone"] == counts["mixed gone"] == 0


def test_an_editor_that_always_reloads_needs_no_earlier_writes() -> None:
    drive(range(TRIALS, TRIALS + TRIALS // 3), ("normal",), history=False)


@settings(max_examples=HYPOTHESIS_TRIALS, deadline=None, derandomize=True)
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), strategy=st.sampled_from(STRATEGIES))
def test_hypothesis_trials_keep_every_keystroke(seed: int, strategy: str) -> None:
    run_trial(seed, strategy)
