"""Parsers of judge output: pure functions; a failure is ``None`` (counted upstream), never 0.

Claim-verification verdicts live in :mod:`metajudge.metrics.judges.parsers.claims` (re-exported here).
Every parser takes the model's text (``<think>`` already stripped by the backend) and returns
the parsed value or ``None``. :data:`PARSER_VERSION` goes into cache keys and signatures: bump
it whenever a parser changes what it accepts.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metajudge.metrics.judges.parsers.claims import (  # noqa: F401 - verdict parsers live there
    json_object,
    loads_reply,
    parse_verdict,
    parse_verdict_list,
)
from metajudge.metrics.judges.parsers.labels import parse_reply  # noqa: F401 - JUDGE-BENCH replies
from metajudge.stats.decisions import Pref, to_pref

if TYPE_CHECKING:  # a type only: parsing needs no backend
    from metajudge.backends.base import TokenLogprob

PARSER_VERSION = "judges-2"  # bump on any change of what a parser accepts (it is in cache keys)

# markdown emphasis / headings the small models like to emit (underscores inside words stay)
_MD = re.compile(r"[*`#>]+|(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])")


def _clean(text: str) -> str:
    return _MD.sub("", text or "").strip()


# ---------------------------------------------------------------------------------------------
# Likert scores (G-Eval)

_LABEL_WORDS = "score|rating|faithfulness|completeness"
_LABELLED_TAIL = r"[^0-9\n]{0,24}?(?<![\d.])([0-9]+(?:\.[0-9]+)?)(?!\.?\d)(?:\s*/\s*[35])?"
_LABELLED = re.compile(rf"(?:{_LABEL_WORDS}){_LABELLED_TAIL}", re.IGNORECASE)
_LEADING = re.compile(
    r"^\s*[\[(]?([0-9]+(?:\.[0-9]+)?)(?:\s*/\s*5)?(?![0-9])(?!\.\s)"
)  # "1. …" is a list item


#: The scale itself, echoed by small models ("Faithfulness (1–5): 4"): never a score.
_RANGE = re.compile(r"\(?\b1\s*(?:–|—|-|to)\s*5\b\)?")
#: A 1–3 scale (G-Eval's fluency, Liu et al. 2023), blanked only when that scale is asked for.
_RANGE3 = re.compile(r"\(?\b1\s*(?:–|—|-|to)\s*3\b\)?")


def _blank_ranges(text: str, hi: int = 5) -> str:
    out = _RANGE.sub(lambda m: " " * len(m.group(0)), text)
    return _RANGE3.sub(lambda m: " " * len(m.group(0)), out) if hi == 3 else out


def _labelled(label: str | None) -> re.Pattern[str]:
    """The labelled-score pattern; ``label`` (a dimension name) is accepted beside the defaults."""
    if label is None:
        return _LABELLED
    return re.compile(rf"(?:{_LABEL_WORDS}|{re.escape(label)}){_LABELLED_TAIL}", re.IGNORECASE)


def parse_score(
    text: str, lo: float = 1, hi: float = 5, *, label: str | None = None
) -> float | None:
    """A Likert score in ``[lo, hi]``: a number labelled "score"/"faithfulness"/…, else a number
    that opens the answer. A list item ("1. Carefully review …"), an out-of-range number or no
    number is ``None``.

    >>> parse_score(" 4")
    4.0
    >>> parse_score("Faithfulness: **3** - the insight invents a year")
    3.0
    >>> parse_score("4/5. Most facts match.")
    4.0
    >>> parse_score("The score is 4.5")
    4.5
    >>> parse_score("Faithfulness (1–5): 2")
    2.0
    >>> parse_score("1. Carefully review the retrieved tables") is None
    True
    >>> parse_score("1. 50m breaststroke: 25.63") is None
    True
    >>> parse_score("7") is None
    True
    >>> parse_score("") is None
    True

    ``label`` names the dimension the prompt asks for (``"Coherence: 4"``); with ``hi=3`` an
    echoed 1–3 scale is no score:

    >>> parse_score("Coherence: 4", label="coherence"), parse_score("Fluency (1-3): 2", hi=3, label="fluency")
    (4.0, 2.0)
    """
    t = _blank_ranges(_clean(text), int(hi))
    if not t.strip():
        return None
    m = _labelled(label).search(t) or _LEADING.match(t.strip())
    if not m:
        return None
    v = float(m.group(1))
    return v if lo <= v <= hi else None


def _score_token(tok: str, lo: int, hi: int) -> int | None:
    s = tok.strip()
    return int(s) if s.isdigit() and len(s) == 1 and lo <= int(s) <= hi else None


@dataclass(frozen=True)
class ScoreDistribution:
    """Probabilities of the score tokens at the position where the model wrote its score."""

    probs: dict[int, float]  # normalised over lo..hi
    mass: float  # probability mass the score tokens had before normalising
    position: int  # index of the generated token

    @property
    def expected(self) -> float:
        return sum(s * p for s, p in self.probs.items())


def score_distribution(
    logprobs: Sequence[TokenLogprob] | None, lo: int = 1, hi: int = 5
) -> ScoreDistribution | None:
    """G-Eval's probability-weighted score (Liu et al. 2023, Eq. 1): Σ s·p(s) over the score tokens.

    The position used is the first generated token that is itself a score digit ``lo..hi``
    (so "Score: 4" works, not only a bare "4"), skipping an echoed scale such as "(1–5)".
    At that position the top alternatives are read;
    tokens that strip to the same digit (``"4"``, ``" 4"``) are summed, then normalised over
    ``lo..hi``. No score token generated, or a score token whose log-probability is NaN or
    above 0 (a broken server) → ``None``; ``-inf`` is a probability of 0.

    >>> from metajudge.backends.base import TokenLogprob
    >>> lp = [TokenLogprob(" 4", math.log(0.6), ((" 4", math.log(0.6)), (" 3", math.log(0.2)), ("4", math.log(0.1)), (" The", math.log(0.1))))]
    >>> d = score_distribution(lp)
    >>> round(d.expected, 4), round(d.mass, 2)
    (3.7778, 0.9)
    >>> score_distribution([TokenLogprob("Yes", -0.1)]) is None
    True
    >>> echo = [TokenLogprob(t, -0.1) for t in ("Faith", " (", "1", "–", "5", "):", " ")] + lp
    >>> score_distribution(echo).position
    7
    >>> score_distribution([TokenLogprob("4", 1000.0)]) is None  # math.exp would overflow
    True
    """
    if not logprobs:
        return None
    text = "".join(tl.token for tl in logprobs)
    masked = _blank_ranges(text, hi)
    offset = 0
    for i, tl in enumerate(logprobs):
        start, offset = offset, offset + len(tl.token)
        if _score_token(tl.token, lo, hi) is None or not masked[start:offset].strip():
            continue
        acc: dict[int, float] = {}
        alts = tl.top or ((tl.token, tl.logprob),)
        if tl.token not in {a for a, _ in alts}:
            alts = ((tl.token, tl.logprob), *alts)
        for tok, lp in alts:
            s = _score_token(tok, lo, hi)
            if s is None:
                continue
            if math.isnan(lp) or lp > 1e-3:  # no probability (-inf is p = 0): unusable
                return None
            acc[s] = acc.get(s, 0.0) + math.exp(min(lp, 0.0))
        mass = sum(acc.values())
        if mass <= 0:
            return None
        return ScoreDistribution({s: acc.get(s, 0.0) / mass for s in range(lo, hi + 1)}, mass, i)
    return None


# ---------------------------------------------------------------------------------------------
# Lists (claims, topics)

_ITEM = re.compile(r"^\s*(?:(\d{1,3})\s*[.):]|[-*•])\s+(.*\S)\s*$")
_NONE = re.compile(r"^\s*(none|no claims?|no topics?|n/?a|nothing|\[\s*\])\.?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class ItemList:
    """Items of a list reply after de-duplication and an optional cap, with what was removed."""

    items: list[str]
    duplicates: list[str]  # exact repeats removed (case and spacing ignored), in order
    capped: int  # distinct items dropped by ``max_items``

    def record(self, what: str) -> dict[str, object]:
        """The details entry: ``{what}_parsed``, ``duplicate_{what}``, ``{what}_capped``."""
        return {
            f"{what}_parsed": len(self.items) + len(self.duplicates) + self.capped,
            f"duplicate_{what}": list(self.duplicates),
            f"{what}_capped": self.capped,
        }


def dedupe_items(items: list[str], max_items: int | None = None) -> ItemList:
    """Exact duplicates removed (recorded), then at most ``max_items`` kept (``None``: all).

    >>> dedupe_items(["A won.", "a  won.", "B lost."], 1)
    ItemList(items=['A won.'], duplicates=['a  won.'], capped=1)
    """
    seen: set[str] = set()
    out, dups = [], []
    for it in items:
        key = " ".join(it.lower().split())
        if not key:
            continue
        if key in seen:
            dups.append(it)
        else:
            seen.add(key)
            out.append(it)
    keep = out if max_items is None else out[:max_items]
    return ItemList(keep, dups, len(out) - len(keep))


def _dedupe(items: list[str], max_items: int | None) -> list[str]:
    return dedupe_items(items, max_items).items


def parse_items(text: str, *, continued: bool = False) -> list[str] | None:
    """Every item of a list reply, as written (duplicates kept): see :func:`parse_list`."""
    return parse_list(text, max_items=None, continued=continued, dedupe=False)


def parse_list(
    text: str, *, max_items: int | None = 30, continued: bool = False, dedupe: bool = True
) -> list[str] | None:
    """Items of a numbered/bulleted list or a JSON array of strings.

    ``continued=True`` when the prompt already wrote "1." and the model continues the first item
    (the ``small`` prompts): the first line is then item 1. Exact duplicates (small models loop)
    are dropped, at most ``max_items`` kept. An explicit "None" is ``[]`` (no claims); empty or
    list-less text is ``None`` (a parse failure). A truncated last item is kept as written.

    >>> parse_list("1. A won.\\n2. B lost.\\nThat is all.")
    ['A won.', 'B lost.']
    >>> parse_list(' Sales were 10.\\n2. Sales were 15.', continued=True)
    ['Sales were 10.', 'Sales were 15.']
    >>> parse_list('["x", "y", "x"]')
    ['x', 'y']
    >>> parse_list("None")
    []
    >>> parse_list("The insight is about football.") is None
    True
    >>> parse_list("2.", continued=True) is None
    True
    """
    t = (text or "").strip()
    if not t:
        return None
    if t.startswith("["):
        arr = loads_reply(t)
        if isinstance(arr, list) and all(isinstance(x, str) for x in arr):
            arr = [x.strip() for x in arr]
            return _dedupe(arr, max_items) if dedupe else [x for x in arr if x]
    if _NONE.match(_clean(t)):
        return []
    lines = t.splitlines()
    items: list[str] = []
    if continued and lines and not _ITEM.match(lines[0]) and lines[0].strip():
        first = _clean(lines[0])
        if not re.fullmatch(r"(\d{1,3}\s*[.):]|[-*•])?", first):  # a bare marker ("2.") is no item
            items.append(first)
        lines = lines[1:]
    for ln in lines:
        m = _ITEM.match(ln) or _ITEM.match(_MD.sub("", ln))
        if m:
            items.append(_clean(m.group(2)))
    items = [i for i in items if i]
    if not items:
        return None
    return _dedupe(items, max_items) if dedupe else items


# ---------------------------------------------------------------------------------------------
# Topic matching (MT-RAIG completeness)


def _indices(s: str, n: int) -> tuple[list[int], int]:
    found = [int(x) for x in re.findall(r"(?<![\d.])(\d{1,3})(?!\d)(?!\.\d)", s)]
    valid = sorted({i for i in found if 1 <= i <= n})
    return valid, len([i for i in found if not 1 <= i <= n])


_INDEX_ONLY = re.compile(r"^(?:[\s\d,;:&()\[\].-]|\band\b|\btopics?\b)*$", re.IGNORECASE)


def _section_indices(section: str, n: int) -> tuple[list[int], int]:
    """Indices named in one matched-subset section, never numbers from echoed topic text:
    bracketed lists ``[1, 3]``; the leading number of an echoed list item ("9. Top 10 home
    games." is topic 9); otherwise only lines made of numbers and separators ("1, 3 and 4").

    >>> _section_indices("9. Top 10 home games.", 10)
    ([9], 0)
    >>> _section_indices("[1, 2, 8]", 5)
    ([1, 2], 1)
    """
    picked: list[str] = []
    for line in section.splitlines():
        brackets = re.findall(r"\[([^\]]*)\]", line)
        item = re.match(r"^\s*(?:[-*•]\s*)?(\d{1,3})\s*[.):]\s+\S", line)
        if brackets:
            picked += brackets
        elif item:
            picked.append(item.group(1))
        elif _INDEX_ONLY.match(line):
            picked.append(line)
    return _indices(" ".join(picked), n)


@dataclass(frozen=True)
class Matching:
    matched_a: tuple[int, ...]  # 1-based indices into topic set A (reference)
    matched_b: tuple[int, ...]  # 1-based indices into topic set B (prediction)
    invalid: int = 0  # indices outside the sets (ignored, reported)


def parse_matching(text: str, n_a: int, n_b: int) -> Matching | None:
    """The two matched subsets of MT-RAIG Table 16: ``{"matched_a": [...], "matched_b": [...]}``
    or the paper's "Matched topic subset of A: [1, 2] … of B: [1, 3]". Indices outside the sets
    are dropped and counted; no B section found → ``None``.

    >>> parse_matching("Matched topic subset of A: [1, 2, 8]\\n\\nMatched topic subset of B: [1, 3]", 5, 4)
    Matching(matched_a=(1, 2), matched_b=(1, 3), invalid=1)
    >>> parse_matching('{"matched_a": [2], "matched_b": []}', 3, 3)
    Matching(matched_a=(2,), matched_b=(), invalid=0)
    >>> parse_matching(" [1, 2]\\nMatched topic subset of B: None", 2, 2)
    Matching(matched_a=(1, 2), matched_b=(), invalid=0)
    >>> parse_matching("Both sets discuss attendance.", 3, 3) is None
    True
    >>> parse_matching("Topic set A: 1. x\\n2. y\\nTopic set B:", 2, 2) is None
    True
    """
    obj = json_object(text)
    if obj is not None and ("matched_a" in obj or "matched_b" in obj):
        a_raw, b_raw = obj.get("matched_a", []), obj.get("matched_b", [])
        if not isinstance(a_raw, list) or not isinstance(b_raw, list):
            return None
        a, ia = _indices(" ".join(str(x) for x in a_raw), n_a)
        b, ib = _indices(" ".join(str(x) for x in b_raw), n_b)
        return Matching(tuple(a), tuple(b), ia + ib)
    t = _MD.sub("", text or "")
    # the headers must say "matched" (an echo of the input "Topic set B:" is no answer)
    mb = re.search(r"match\w*[^\n:]{0,30}?\bB\s*[:\-]", t, re.IGNORECASE)
    if not mb:
        return None
    a_part = t[: mb.start()]
    ma = re.search(r"match\w*[^\n:]{0,30}?\bA\s*[:\-]", a_part, re.IGNORECASE)
    if ma:
        a_part = a_part[ma.end() :]
    b_part = t[mb.end() :]
    b_part = re.split(r"\n\s*\n", b_part.strip(), maxsplit=1)[0] if b_part.strip() else ""
    a, ia = _section_indices(a_part, n_a)
    b, ib = _section_indices(b_part, n_b)
    return Matching(tuple(a), tuple(b), ia + ib)


# ---------------------------------------------------------------------------------------------
# Answer equivalence and fact coverage (MuDABench)


def parse_equivalence(text: str) -> tuple[int | None, str]:
    """``(1|0|None, rationale)`` from ``{"equivalent": true, "rationale": "…"}`` or a Yes/No
    sentence. Truncated JSON still yields the verdict when ``"equivalent"`` was written.

    >>> parse_equivalence('{"equivalent": true, "rationale": "Same value."}')
    (1, 'Same value.')
    >>> parse_equivalence('{"equivalent": false, "rationale": "The sign di')
    (0, 'The sign di')
    >>> parse_equivalence("No. The gold answer is 12.5%.")
    (0, 'No. The gold answer is 12.5%.')
    >>> parse_equivalence("")
    (None, '')
    """
    obj = json_object(text)
    if obj is not None and "equivalent" in obj:
        v = obj["equivalent"]
        verdict = int(v) if isinstance(v, bool) else parse_verdict(str(v))
        return verdict, str(obj.get("rationale", ""))[:300]
    t = (text or "").strip()
    m = re.search(r'"equivalent"\s*:\s*(true|false)', t, re.IGNORECASE)
    if m:
        r = re.search(r'"rationale"\s*:\s*"([^"]*)', t)
        return (1 if m.group(1).lower() == "true" else 0), (r.group(1) if r else "")
    if not t:
        return None, ""
    low = _clean(t).lower()
    if re.match(r"^(not equivalent|no\b|false\b|incorrect|different)", low):
        return 0, t[:300]
    if re.match(r"^(equivalent|yes\b|true\b|correct|same)", low):
        return 1, t[:300]
    first = re.split(r"(?<=[.!?])\s|\n", low, maxsplit=1)[0]
    if re.search(r"\bnot\s+(?:semantically\s+)?equivalent\b|\bnot the same\b", first):
        return 0, t[:300]
    if re.search(r"\bis\s+(?:semantically\s+)?equivalent\b|\bis the same\b", first):
        return 1, t[:300]
    return None, t[:300]


FACT_LABELS = ("covered", "wrong", "missing")


def parse_fact_labels(text: str, n: int) -> list[str | None] | None:
    """``n`` labels in {covered, wrong, missing} from ``{"facts": [...]}`` or numbered lines;
    unreadable ones ``None``; truncated JSON keeps what was written.

    >>> parse_fact_labels('{"facts": ["covered", "Wrong", "missing"]}', 3)
    ['covered', 'wrong', 'missing']
    >>> parse_fact_labels('{"facts": ["covered", "wro', 3)
    ['covered', None, None]
    >>> parse_fact_labels("1. covered\\n2. missing", 2)
    ['covered', 'missing']
    >>> parse_fact_labels("n/a", 2) is None
    True
    """

    def one(s: str) -> str | None:
        s = _clean(str(s)).lower()
        for lab in FACT_LABELS:
            if re.match(rf"^{lab}\b", s):
                return lab
        return None

    obj = json_object(text)
    labels: list[str | None]
    if obj is not None and isinstance(obj.get("facts"), list):
        labels = [one(x) for x in obj["facts"]]
    else:
        t = text or ""
        k = t.find("[")
        quoted = re.findall(r'"(covered|wrong|missing)"', t[k:], re.IGNORECASE) if k >= 0 else []
        if quoted:
            labels = [q.lower() for q in quoted]
        else:
            by_index: dict[int, str | None] = {}
            for ln in t.splitlines():
                m = re.match(r"^\s*(\d{1,3})\s*[.):]\s*(.*)$", _MD.sub("", ln))
                if m and 1 <= int(m.group(1)) <= n and int(m.group(1)) not in by_index:
                    by_index[int(m.group(1))] = one(m.group(2))
            labels = [by_index.get(i) for i in range(1, n + 1)]
    if not any(lab is not None for lab in labels):
        return None
    labels = labels[:n]
    return labels + [None] * (n - len(labels))


_EXTRA = re.compile(r'"extra_wrong"\s*:\s*"?(\d{1,4})\b')


def parse_extra_wrong(text: str) -> int | None:
    """E_i's extra count: ``"extra_wrong": k`` (a non-negative integer) of the fact-coverage
    answer, also from truncated or malformed JSON; ``None`` when absent or not an integer.

    >>> parse_extra_wrong('{"facts": ["covered"], "extra_wrong": 2}'), parse_extra_wrong('{"facts": ["covered"]}')
    (2, None)
    >>> parse_extra_wrong('{"facts": ["covered"], "extra_wrong": 1'), parse_extra_wrong('{"extra_wrong": -1}')
    (1, None)
    """
    obj = json_object(text)
    if obj is not None and "extra_wrong" in obj:
        v = obj["extra_wrong"]
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return v if v >= 0 else None
        if isinstance(v, str) and v.strip().isdigit():
            return int(v)
        return None
    m = _EXTRA.search(text or "")
    return int(m.group(1)) if m else None


# Arena-Hard pairwise verdicts

_VERDICT = re.compile(r"\[\[([AB<>=]+)\]\]")


def parse_arena_hard(text: str | None) -> Pref | None:
    """The decision of an Arena-Hard reply (``Pref.A`` for ``A>B``, ``TIE``, ``B``), or None.

    Arena-Hard-Auto (Li et al. 2024) asks the judge to end with one of ``[[A>>B]]``, ``[[A>B]]``,
    ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``. Its reference parser finds every bracketed verdict and
    accepts the reply only when all matches agree; JudgeBench (Tan et al. 2024) keeps the direction
    and drops the strength (then reads it as a released decision,
    :data:`metajudge.stats.decisions.SPELLINGS`). No verdict, conflicting verdicts or an unknown
    one → None (counted, never guessed).

    >>> parse_arena_hard("... My final verdict is: [[B>>A]]")
    <Pref.B: 1>
    >>> parse_arena_hard("[[A=B]] ... [[A=B]]"), parse_arena_hard("[[A>B]] or [[B>A]]")
    (<Pref.TIE: 0>, None)
    >>> parse_arena_hard("no verdict"), parse_arena_hard(None), parse_arena_hard("[[A<B]]")
    (None, None, None)
    """
    if not text:
        return None
    found = set(_VERDICT.findall(text))
    if len(found) != 1:
        return None
    verdict = found.pop()
    if verdict in ("A>>B", "B>>A"):
        verdict = verdict.replace(">>", ">")
    try:
        return to_pref(verdict, "released")
    except ValueError:
        return None
